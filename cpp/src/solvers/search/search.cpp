// Placeholder: replaced by the search methods.
namespace servelab::solvers {}
