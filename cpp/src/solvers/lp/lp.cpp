// Placeholder: replaced by the LP adapter.
namespace servelab::solvers {}
