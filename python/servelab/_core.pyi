"""
servelab's C++ core. Use the public API in the servelab package instead.
"""
from __future__ import annotations
import collections.abc
import numpy
import numpy.typing
import os
import typing
recsys: typing.Any  # a submodule; use servelab.recsys
solvers: typing.Any  # a submodule; use servelab.solvers
kairos: typing.Any  # a submodule; use servelab.kairos
ramsis: typing.Any  # a submodule; use servelab.ramsis
rrl: typing.Any  # a submodule; use servelab.rrl
hera: typing.Any  # a submodule; use servelab.hera
infaas: typing.Any  # a submodule; use servelab.infaas
__all__: list[str] = ['Actions', 'Application', 'ArrivalCursor', 'ArrivalProcess', 'BatchDone', 'ClippedGaussianSize', 'ClusterView', 'ConfigModel', 'ConstantSize', 'EmpiricalSize', 'Executor', 'ExecutorBatch', 'ExecutorBuilder', 'FallbackSize', 'Gamma', 'InterferenceModel', 'LatencyEstimator', 'LognormalSize', 'LoopModel', 'MMPP', 'MachineGroup', 'MlpWeights', 'Model', 'PiecewiseRate', 'Poisson', 'PoissonIntegerMs', 'Profile', 'PythonExecutorBuilder', 'Query', 'QueryInputs', 'QueryStream', 'ReferenceMlp', 'RemoteWorker', 'Replay', 'Scheduler', 'ServingSession', 'SizeDistribution', 'SizeMixture', 'UniformSize', 'WorkerGroup', 'Workload', 'abandoned_worker_threads', 'build_info', 'extend_executors', 'extend_schedulers', 'hera', 'infaas', 'kairos', 'kairos_sizes', 'list_arrival_processes', 'list_config_models', 'list_executors', 'list_interference_models', 'list_loop_models', 'list_schedulers', 'list_size_distributions', 'make_arrival_process', 'make_config_model', 'make_executor', 'make_interference_model', 'make_loop_model', 'make_scheduler', 'make_size_distribution', 'ramsis', 'read_azure_functions_counts', 'read_gaps_csv', 'read_rate_trace', 'read_timestamps_csv', 'recsys', 'remote_hosted', 'remote_transport', 'retract_executor', 'retract_scheduler', 'ribbon_sizes', 'rrl', 'serve_run', 'simulate_run', 'solvers', 'zipf_shares']
class Model:
    """
    A loaded model: maps a [batch, features] float32 batch to [batch, outputs]. Call it like a function.
    """
    def __call__(self, input: typing.Any) -> typing.Any:
        ...
    def run(self, input: typing.Annotated[numpy.typing.ArrayLike, numpy.float32]) -> numpy.typing.NDArray[numpy.float32]:
        """
        Runs one batch with the GIL released; returns a new float32 array.
        """
    @property
    def backend(self) -> str:
        """
        Which executor backend runs this model.
        """
    @property
    def in_features(self) -> typing.Any:
        """
        Expected input width, or None when only a call can tell.
        """
class MlpWeights:
    """
    Weights of a Linear-ReLU-...-Linear MLP, layer i as (weight [out, in], bias [out]) like torch.nn.Linear.
    """
    @staticmethod
    def random(widths: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex], seed: typing.SupportsInt | typing.SupportsIndex) -> MlpWeights:
        """
        Random weights for layer widths [in, hidden..., out], uniform in +-1/sqrt(fan_in).
        """
    def __init__(self, layers: collections.abc.Sequence[tuple[typing.Annotated[numpy.typing.ArrayLike, numpy.float32], typing.Annotated[numpy.typing.ArrayLike, numpy.float32]]]) -> None:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def in_features(self) -> int:
        ...
    @property
    def layers(self) -> list:
        """
        Copies of the layers as (weight, bias) numpy arrays.
        """
    @property
    def out_features(self) -> int:
        ...
class ReferenceMlp(Model):
    """
    The MLP in plain C++ loops (double accumulation): the reference for other backends.
    """
    def __init__(self, weights: MlpWeights) -> None:
        ...
class SizeDistribution:
    """
    An immutable request-size distribution: how many items each query carries. Sizes are integers >= 1.
    A real draw x becomes a size in one step: with round_to == 1 the nearest integer (halves up, as Ribbon's
    round()), with round_to == k > 1 the next multiple of k above x (ceil(x / k) * k, as Kairos); then at least
    round_to, saturating at 2**31 - 1. generate() draws in bulk.
    """
    def __repr__(self) -> str:
        ...
    def describe(self) -> str:
        """
        The distribution and its parameters, e.g. 'lognormal(mu=5.1, sigma=0.2)' (a registry spec).
        """
    def generate(self, *, seed: typing.Any, count: typing.SupportsInt | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.int32]:
        """
        `count` sizes as an int32 numpy array (no copy), from the stream "sizes" of `seed`: the same seed
        gives the same sizes bit for bit. Releases the GIL; Ctrl-C stops it.
        """
    @property
    def mean(self) -> float:
        """
        Expected size after clipping and rounding: exact for discrete distributions, a fine quadrature (relative error below 1e-3) for continuous ones.
        """
    @property
    def round_to(self) -> int:
        """
        Sizes are multiples of this.
        """
class ConstantSize(SizeDistribution):
    """
    Every query has `value` items.
    """
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex, *, round_to: typing.SupportsInt | typing.SupportsIndex = 1) -> None:
        """
        value: items per query, 1 .. 2**31 - 1. round_to: round sizes up to a multiple of this (Kairos uses 10); 1 rounds to the nearest integer.
        """
    @property
    def value(self) -> int:
        """
        Items per query.
        """
class UniformSize(SizeDistribution):
    """
    Integers uniform on low..high, both included.
    """
    def __init__(self, low: typing.SupportsInt | typing.SupportsIndex, high: typing.SupportsInt | typing.SupportsIndex, *, round_to: typing.SupportsInt | typing.SupportsIndex = 1) -> None:
        """
        1 <= low <= high <= 2**31 - 1. round_to: round sizes up to a multiple of this (Kairos uses 10); 1 rounds to the nearest integer.
        """
    @property
    def high(self) -> int:
        """
        Largest size.
        """
    @property
    def low(self) -> int:
        """
        Smallest size.
        """
class LognormalSize(SizeDistribution):
    """
    Lognormal sizes exp(N(mu, sigma**2)): mu and sigma are those of the underlying normal, as numpy.random.lognormal.
    """
    def __init__(self, mu: typing.SupportsFloat | typing.SupportsIndex, sigma: typing.SupportsFloat | typing.SupportsIndex, *, round_to: typing.SupportsInt | typing.SupportsIndex = 1) -> None:
        """
        mu finite, sigma > 0. round_to: round sizes up to a multiple of this (Kairos uses 10); 1 rounds to the nearest integer.
        """
    @property
    def mu(self) -> float:
        """
        Mean of the underlying normal.
        """
    @property
    def sigma(self) -> float:
        """
        Standard deviation of the underlying normal.
        """
class ClippedGaussianSize(SizeDistribution):
    """
    A normal N(mean, std**2) clipped to [low, high]: draws outside move to the nearer bound (not redrawn).
    """
    def __init__(self, mean: typing.SupportsFloat | typing.SupportsIndex, std: typing.SupportsFloat | typing.SupportsIndex, low: typing.SupportsFloat | typing.SupportsIndex = 1.0, high: typing.SupportsFloat | typing.SupportsIndex = ..., *, round_to: typing.SupportsInt | typing.SupportsIndex = 1) -> None:
        """
        mean finite, std > 0, low finite, high may be inf, low <= high. round_to: round sizes up to a multiple of this (Kairos uses 10); 1 rounds to the nearest integer.
        """
    @property
    def gaussian_mean(self) -> float:
        """
        Mean of the normal before clipping (`mean` is the size's expectation).
        """
    @property
    def high(self) -> float:
        """
        Upper clip.
        """
    @property
    def low(self) -> float:
        """
        Lower clip.
        """
    @property
    def std(self) -> float:
        """
        Standard deviation of the normal.
        """
class EmpiricalSize(SizeDistribution):
    """
    One of `values`: chosen uniformly (weights=None: the values are samples, e.g. a trace's sizes) or with
    probability proportional to `weights` (a histogram).
    """
    def __init__(self, values: collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex], weights: collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex] | None = None, *, round_to: typing.SupportsInt | typing.SupportsIndex = 1) -> None:
        """
        values: positive sizes (floats are rounded); weights: one non-negative weight per value, not all zero, or None. round_to: round sizes up to a multiple of this (Kairos uses 10); 1 rounds to the nearest integer.
        """
    @property
    def values(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        A copy of the values.
        """
    @property
    def weights(self) -> typing.Any:
        """
        A copy of the weights, or None for a uniform choice.
        """
class SizeMixture(SizeDistribution):
    """
    Draws from component i with probability weights[i] / sum(weights). The components' draws stay real
    until this mixture rounds them (so Kairos's ceil-to-10 sees the raw lognormal).
    """
    def __init__(self, components: collections.abc.Sequence, weights: collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex], *, round_to: typing.SupportsInt | typing.SupportsIndex = 1) -> None:
        """
        components: SizeDistributions or spec strings; weights: one non-negative weight each, not all zero. round_to: round sizes up to a multiple of this (Kairos uses 10); 1 rounds to the nearest integer.
        """
    @property
    def components(self) -> list:
        """
        The components.
        """
    @property
    def weights(self) -> list[float]:
        """
        The weights, as given.
        """
class FallbackSize(SizeDistribution):
    """
    Draws from `base`; a draw outside [low, high] is replaced by one draw from `fallback` (not checked again).
    Kairos keeps its lognormal sizes in [100, 200] this way, else U{190..199}.
    """
    def __init__(self, base: typing.Any, low: typing.SupportsFloat | typing.SupportsIndex, high: typing.SupportsFloat | typing.SupportsIndex, fallback: typing.Any, *, round_to: typing.SupportsInt | typing.SupportsIndex = 1) -> None:
        """
        base, fallback: SizeDistributions or spec strings; low <= high (high may be inf). round_to: round sizes up to a multiple of this (Kairos uses 10); 1 rounds to the nearest integer.
        """
    @property
    def base(self) -> SizeDistribution:
        """
        The distribution drawn first.
        """
    @property
    def fallback(self) -> SizeDistribution:
        """
        The distribution used when base's draw is outside [low, high].
        """
    @property
    def high(self) -> float:
        """
        Largest kept value of base.
        """
    @property
    def low(self) -> float:
        """
        Smallest kept value of base.
        """
class ArrivalCursor:
    """
    One run of an arrival process: iterate it for arrival times in seconds (floats), or call next_ns() for int nanoseconds. Infinite unless the process is a finite trace.
    """
    def __iter__(self) -> typing.Any:
        """
        The cursor itself (an iterator).
        """
    def __next__(self) -> float:
        """
        The next arrival time in seconds; StopIteration when a finite trace has ended.
        """
    def next_ns(self) -> int | None:
        """
        The next arrival time in int nanoseconds, or None when a finite trace has ended.
        """
class ArrivalProcess:
    """
    An immutable arrival process. generate() draws arrival times in bulk, start() lazily.
    Times are from t=0, non-decreasing, kept in int64 nanoseconds inside.
    """
    def __repr__(self) -> str:
        ...
    def describe(self) -> str:
        """
        The process and its parameters, e.g. 'poisson(rate=100)'.
        """
    def generate(self, *, seed: typing.Any, count: typing.SupportsInt | typing.SupportsIndex | None = None, horizon_s: typing.SupportsFloat | typing.SupportsIndex | None = None) -> numpy.typing.NDArray[numpy.float64]:
        """
        Arrival times in seconds as a float64 numpy array.
        seed: run seed (arrivals come from its stream "arrivals"); count: stop after this many arrivals;
        horizon_s: stop at the first arrival at or after this time (not included). Either may be None
        (no limit) but not both; a finite trace may also end first. Releases the GIL; Ctrl-C stops it.
        """
    def generate_ns(self, *, seed: typing.Any, count: typing.SupportsInt | typing.SupportsIndex | None = None, horizon_s: typing.SupportsFloat | typing.SupportsIndex | None = None) -> numpy.typing.NDArray[numpy.int64]:
        """
        Arrival times in int64 nanoseconds (exact, as the simulator uses them).
        seed: run seed (arrivals come from its stream "arrivals"); count: stop after this many arrivals;
        horizon_s: stop at the first arrival at or after this time (not included). Either may be None
        (no limit) but not both; a finite trace may also end first. Releases the GIL; Ctrl-C stops it.
        """
    def start(self, *, seed: typing.Any) -> ArrivalCursor:
        """
        A lazy ArrivalCursor over the same times generate(seed=seed, ...) returns.
        """
    @property
    def mean_rate(self) -> float:
        """
        Long-run mean rate in queries/s (the average over one pass of a finite trace); NaN when unknown.
        """
class Poisson(ArrivalProcess):
    """
    Poisson arrivals: exponential gaps with mean 1/rate.
    """
    def __init__(self, rate: typing.SupportsFloat | typing.SupportsIndex) -> None:
        """
        rate: queries/s, positive and finite.
        """
    @property
    def rate(self) -> float:
        """
        Queries/s.
        """
class PoissonIntegerMs(ArrivalProcess):
    """
    Gaps are whole milliseconds drawn from a Poisson distribution with mean 1000/rate ms, as the Kairos and Ribbon artifacts generate them (numpy.random.poisson(mean_gap_ms)); 0 ms gaps (ties) occur.
    """
    def __init__(self, rate: typing.SupportsFloat | typing.SupportsIndex) -> None:
        """
        rate: queries/s (mean gap 1000/rate ms, at most 1e12 ms).
        """
    @property
    def mean_gap_ms(self) -> float:
        """
        1000/rate.
        """
    @property
    def rate(self) -> float:
        """
        Queries/s.
        """
class Gamma(ArrivalProcess):
    """
    Renewal arrivals with gamma-distributed gaps: mean 1/rate and coefficient of variation cv (cv=1 is Poisson, below 1 smoother, above 1 burstier).
    """
    def __init__(self, rate: typing.SupportsFloat | typing.SupportsIndex, cv: typing.SupportsFloat | typing.SupportsIndex) -> None:
        """
        rate: queries/s; cv: standard deviation / mean of the gaps; both positive and finite.
        """
    @property
    def cv(self) -> float:
        """
        Coefficient of variation of the gaps.
        """
    @property
    def rate(self) -> float:
        """
        Queries/s.
        """
class MMPP(ArrivalProcess):
    """
    Two-state Markov-modulated Poisson process (on/off): Poisson at rate_on while on and at rate_off (may be 0) while off; on and off periods are exponential with means mean_on_s and mean_off_s. Starts in the stationary state, so mean_rate = (rate_on*mean_on_s + rate_off*mean_off_s) / (mean_on_s + mean_off_s) from t=0.
    """
    def __init__(self, rate_on: typing.SupportsFloat | typing.SupportsIndex, rate_off: typing.SupportsFloat | typing.SupportsIndex, mean_on_s: typing.SupportsFloat | typing.SupportsIndex, mean_off_s: typing.SupportsFloat | typing.SupportsIndex) -> None:
        """
        Rates in queries/s, mean period lengths in seconds.
        """
    @property
    def mean_off_s(self) -> float:
        """
        Mean length of an off period, seconds.
        """
    @property
    def mean_on_s(self) -> float:
        """
        Mean length of an on period, seconds.
        """
    @property
    def rate_off(self) -> float:
        """
        Queries/s while off.
        """
    @property
    def rate_on(self) -> float:
        """
        Queries/s while on.
        """
class PiecewiseRate(ArrivalProcess):
    """
    Poisson arrivals at rates[i] queries/s during interval i (each interval_s * time_scale seconds long). time_scale stretches (> 1) or compresses (< 1) time keeping the rates, e.g. 300/270 plays a 270 s trace over 5 minutes. Ends after the last interval unless repeat. Exact (no thinning).
    """
    def __init__(self, interval_s: typing.SupportsFloat | typing.SupportsIndex, rates: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], time_scale: typing.SupportsFloat | typing.SupportsIndex = 1.0, repeat: bool = False) -> None:
        """
        interval_s: seconds per interval; rates: queries/s per interval (>= 0); time_scale: > 0.
        """
    @property
    def duration_s(self) -> float:
        """
        Length of one pass over all intervals, seconds (after time_scale).
        """
    @property
    def interval_s(self) -> float:
        """
        Seconds per interval before time_scale.
        """
    @property
    def rates(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        A copy of the per-interval rates, queries/s.
        """
    @property
    def repeat(self) -> bool:
        """
        Whether the trace starts over after its end.
        """
    @property
    def time_scale(self) -> float:
        """
        Multiplies every interval's length.
        """
class Replay(ArrivalProcess):
    """
    Replays explicit arrival times; with a period, the trace repeats (pass k adds k * period).
    """
    @staticmethod
    def from_gaps(gaps_s: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], repeat: bool = False) -> Replay:
        """
        Arrivals at the cumulative sums of gaps_s (seconds, non-negative; the first arrival is at gaps_s[0]). With repeat, the gaps are replayed cyclically.
        """
    def __init__(self, timestamps_s: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], period_s: typing.SupportsFloat | typing.SupportsIndex | None = None) -> None:
        """
        timestamps_s: arrival times in seconds, non-negative and non-decreasing; period_s: repeat every period_s seconds (at least the last time), or None to end after the last time.
        """
    def __len__(self) -> int:
        """
        Arrivals in one pass.
        """
    @property
    def period_s(self) -> float | None:
        """
        The repeat period in seconds, or None for a trace that ends.
        """
    @property
    def timestamps_ns(self) -> numpy.typing.NDArray[numpy.int64]:
        """
        The times of one pass, int64 nanoseconds (copy).
        """
    @property
    def timestamps_s(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        The times of one pass, seconds (float64 copy).
        """
class Query:
    """
    One request: read-only fields; times in seconds (or _ns).
    """
    def __repr__(self) -> str:
        ...
    @property
    def accuracy_floor(self) -> float:
        """
        Lowest model accuracy its application accepts.
        """
    @property
    def app(self) -> int:
        """
        Index of its application.
        """
    @property
    def arrival_ns(self) -> int:
        ...
    @property
    def arrival_s(self) -> float:
        ...
    @property
    def deadline_ns(self) -> int:
        ...
    @property
    def deadline_s(self) -> float:
        ...
    @property
    def id(self) -> int:
        """
        Dense id: the i-th query of the run has id i.
        """
    @property
    def size(self) -> int:
        """
        Items in the request.
        """
class QueryStream:
    """
    The lazy queries of one run: iterate it for Query objects.
    """
    def __iter__(self) -> typing.Any:
        """
        The stream itself (an iterator).
        """
    def __next__(self) -> Query:
        """
        The next Query; StopIteration once the workload ends.
        """
class Application:
    """
    One application of a workload: its name, latency SLO, share of the queries, request sizes and the lowest model accuracy it accepts. Immutable.
    """
    def __init__(self, name: str, slo_s: typing.SupportsFloat | typing.SupportsIndex, share: typing.SupportsFloat | typing.SupportsIndex | None = None, sizes: typing.Any = None, accuracy_floor: typing.SupportsFloat | typing.SupportsIndex = 0.0, *, arrivals: typing.Any = None) -> None:
        """
        name: unique within a workload; slo_s: deadline = arrival + slo_s (seconds, > 0); share: relative rate
        share (> 0, normalised over the applications; None: 1); sizes: a SizeDistribution, a spec string such
        as 'lognormal(mu=5.1, sigma=0.2)', or None (every query has size 1); accuracy_floor: in [0, 1];
        arrivals: the application's own ArrivalProcess or spec (then give one to every application, none to
        the Workload, and no share: the process sets the rate).
        """
    def __repr__(self) -> str:
        ...
    @property
    def accuracy_floor(self) -> float:
        """
        The lowest model accuracy the application accepts (0: any).
        """
    @property
    def arrivals(self) -> typing.Any:
        """
        The application's own arrival process, or None (its share of the workload's).
        """
    @property
    def name(self) -> str:
        """
        The application's name.
        """
    @property
    def share(self) -> float:
        """
        Relative rate share (as given; 1 by default).
        """
    @property
    def sizes(self) -> typing.Any:
        """
        The size distribution, or None (size 1).
        """
    @property
    def slo_s(self) -> float:
        """
        Latency SLO, seconds.
        """
class Workload:
    """
    Arrival process x application mix. Each query picks its application by share (stream "apps"), its size
    from that application's distribution (stream "sizes/<index>") and gets deadline = arrival + slo. A run
    stops after `count` queries, at the first arrival at or after `horizon_s` (not included), or when a
    finite arrival trace ends.
    
    Per-application arrivals: with arrivals=None and every Application given its own arrivals, application i
    arrives as its process does (stream "arrivals/<i>"); the applications' queries are merged by time (ties:
    lower index first) and numbered in that order. count and horizon_s limit the merged stream; a finite trace
    ends only its own application.
    """
    def __init__(self, arrivals: typing.Any, apps: collections.abc.Sequence[Application], count: typing.SupportsInt | typing.SupportsIndex | None = None, horizon_s: typing.SupportsFloat | typing.SupportsIndex | None = None) -> None:
        """
        arrivals: an ArrivalProcess or a spec string such as 'poisson(rate=100)', or None when every
        application has its own; apps: a list of Application with unique names; count and horizon_s: limits,
        either may be None but not both.
        """
    def __repr__(self) -> str:
        ...
    def describe(self) -> str:
        """
        The arrival process, every application and the limits.
        """
    def generate(self, *, seed: typing.Any) -> dict:
        """
        Every query of the run as a dict of numpy columns (no copies): id (int64), app (int32 index into apps),
        size (int32), arrival_s and deadline_s (float64 seconds), accuracy_floor (float32). The same seed gives
        the same queries bit for bit. Releases the GIL; Ctrl-C stops it.
        """
    def start(self, *, seed: typing.Any) -> QueryStream:
        """
        A lazy QueryStream over the same queries generate(seed=seed) returns.
        """
    @property
    def app_names(self) -> list[str]:
        """
        The applications' names, in index order (the `app` column indexes this).
        """
    @property
    def apps(self) -> list[Application]:
        """
        The applications (copies), in index order.
        """
    @property
    def arrivals(self) -> ArrivalProcess:
        """
        The shared arrival process, or None when each application has its own.
        """
    @property
    def count(self) -> int | None:
        """
        The query limit, or None.
        """
    @property
    def expected_queries(self) -> float:
        """
        The expected number of queries of a run: count, or fewer when horizon_s or the end of a finite trace comes first on average (inf: not known).
        """
    @property
    def horizon_s(self) -> float | None:
        """
        The time limit in seconds, or None.
        """
    @property
    def mean_rate(self) -> float:
        """
        Queries per second of all applications together, long-run mean (NaN: not known).
        """
    @property
    def shares(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        Each application's share of the queries, normalised to sum to 1 (with per-application arrivals: by
        mean rate, NaN when one is not known).
        """
class Profile:
    """
    Latency, accuracy, price, memory and load time of models on hardware types.
    
    latency(hardware, model, batch) is a distribution per measured batch size (raw samples or
    percentiles), interpolated linearly across batch sizes; decisions use one statistic ('mean',
    'p50', 'p95', 'p99', 'mean_without_max'), simulated service times are sampled. Hardware and
    models are given by name or by index (order of first mention). Times are seconds.
    Picklable (through to_dict()); servelab.profiles.load/save read and write the JSON format.
    """
    __hash__: typing.ClassVar[None] = None
    @staticmethod
    def __eq__(a: Profile, b: typing.Any) -> bool:
        """
        Profiles are equal when their native dicts are.
        """
    @staticmethod
    def from_dict(data: typing.Any, *, where: str = 'profile dict') -> Profile:
        """
        Builds a Profile from the native format as a dict, validating every field.
        
            ``where`` starts each error message (load() passes the file name).
            
        """
    @staticmethod
    def to_dict(profile: Profile) -> dict[str, typing.Any]:
        """
        The profile in the native format (version 1) as a JSON-ready dict; samples sorted.
        """
    def __getstate__(self) -> typing.Any:
        ...
    def __init__(self, source: str = '') -> None:
        """
        An empty profile; source says where its numbers come from.
        """
    def __repr__(self) -> str:
        ...
    def __setstate__(self, arg0: typing.Any) -> None:
        ...
    def accuracy(self, model: typing.Any) -> typing.Any:
        """
        A model's accuracy in [0, 1], or None when not set.
        """
    def add_hardware(self, name: str, price_per_hour: typing.SupportsFloat | typing.SupportsIndex | None = None) -> int:
        """
        Adds a hardware type (idempotent) and optionally sets its price in $/h; returns its index.
        """
    def add_model(self, name: str, accuracy: typing.SupportsFloat | typing.SupportsIndex | None = None) -> int:
        """
        Adds a model (idempotent) and optionally sets its accuracy in [0, 1]; returns its index.
        """
    def batches(self, hardware: typing.Any, model: typing.Any) -> list[int]:
        """
        Measured batch sizes, ascending.
        """
    def decision_table_ns(self, hardware: typing.Any, model: typing.Any, statistic: str = 'mean') -> numpy.typing.NDArray[numpy.int64]:
        """
        int64 ns latencies for batch 0..max_batch (entry b is batch b; entry 0 repeats batch 1), as the
        simulator uses them.
        """
    def distribution(self, hardware: typing.Any, model: typing.Any, batch: typing.SupportsInt | typing.SupportsIndex) -> dict:
        """
        The measured distribution at one batch size: {'samples_s': sorted float64 array} or
        {'percentiles': {percentile: seconds}}; ValueError for a batch size that was not measured.
        """
    def hardware_index(self, name: str) -> int:
        """
        Index of a hardware type; KeyError if unknown.
        """
    def has_latency(self, hardware: typing.Any, model: typing.Any) -> bool:
        ...
    def has_price(self, hardware: typing.Any) -> bool:
        ...
    def latency(self, hardware: typing.Any, model: typing.Any, batch: typing.Any, statistic: str = 'mean') -> typing.Any:
        """
        Decision latency in seconds: the statistic at batch, linear between the measured batch sizes
        around it, the smallest measured batch's value below it; ValueError beyond max_batch. For a
        sequence of batch sizes, a float64 numpy array of seconds.
        """
    def load_time_s(self, hardware: typing.Any, model: typing.Any) -> typing.Any:
        """
        Seconds, or None when not set.
        """
    def max_batch(self, hardware: typing.Any, model: typing.Any) -> int:
        """
        The largest measured batch size (0 when none).
        """
    def memory_mb(self, hardware: typing.Any, model: typing.Any) -> typing.Any:
        """
        MB, or None when not set.
        """
    def model_index(self, name: str) -> int:
        """
        Index of a model; KeyError if unknown.
        """
    def pairs(self) -> list[tuple[str, str]]:
        """
        (hardware, model) names of every pair with latency, memory or load time.
        """
    def price(self, hardware: typing.Any) -> float:
        """
        $/h of a hardware type; KeyError when not set.
        """
    def sample(self, hardware: typing.Any, model: typing.Any, batch: typing.SupportsInt | typing.SupportsIndex, *, seed: typing.Any, count: typing.SupportsInt | typing.SupportsIndex = 1) -> numpy.typing.NDArray[numpy.float64]:
        """
        count service times in seconds (float64 numpy), drawn as the simulator draws them: a uniform
        choice of the samples (quantile(U) for percentiles), interpolated across batch sizes with one U,
        rounded to whole ns. Deterministic in seed.
        """
    def set_accuracy(self, model: str, accuracy: typing.SupportsFloat | typing.SupportsIndex) -> None:
        """
        Sets a model's accuracy in [0, 1] (e.g. ImageNet top-1 as a fraction), adding it when new.
        """
    def set_latency(self, hardware: str, model: str, batch: typing.SupportsInt | typing.SupportsIndex, samples_s: typing.Annotated[numpy.typing.ArrayLike, numpy.float64] | None = None, percentiles: dict | None = None) -> None:
        """
        Sets the latency of one batch size: samples_s (seconds, each > 0) or percentiles, a dict
        {percentile in (0, 100]: seconds}, e.g. {50: 0.010, 95: 0.014}. Replaces an earlier entry.
        """
    def set_load_time(self, hardware: str, model: str, seconds: typing.SupportsFloat | typing.SupportsIndex) -> None:
        """
        Time to load the model onto the hardware, seconds (>= 0).
        """
    def set_memory_mb(self, hardware: str, model: str, mb: typing.SupportsFloat | typing.SupportsIndex) -> None:
        """
        Memory the model takes on the hardware, MB (>= 0).
        """
    def set_price(self, hardware: str, price_per_hour: typing.SupportsFloat | typing.SupportsIndex) -> None:
        """
        Sets the price of a hardware type in $/h (>= 0), adding it when new.
        """
    def warnings(self, statistic: str = 'mean') -> list[str]:
        """
        One line per (hardware, model) whose statistic decreases as the batch grows (noisy data).
        """
    @property
    def hardware(self) -> list[str]:
        """
        Hardware type names, in index order.
        """
    @property
    def models(self) -> list[str]:
        """
        Model names, in index order.
        """
    @property
    def source(self) -> str:
        """
        Where the numbers come from (paper, artifact, measurement run): free text.
        """
    @source.setter
    def source(self, arg1: str) -> None:
        ...
class LatencyEstimator:
    """
    Online latency estimate for one (hardware, model), as Kairos learns it (HPDC'23, Sec. 5.1): a
    least-squares line latency = intercept + slope * batch over all observations, replaced for a batch
    size by the running mean of its own observations once it has min_observations of them. With one
    distinct batch size (or where the line is not positive) the line through the origin and the mean
    point is used. Seconds.
    """
    def __init__(self, min_observations: typing.SupportsInt | typing.SupportsIndex = 3) -> None:
        ...
    def observations(self, batch: typing.SupportsInt | typing.SupportsIndex) -> int:
        """
        Observations of this batch size.
        """
    def observe(self, batch: typing.SupportsInt | typing.SupportsIndex, seconds: typing.SupportsFloat | typing.SupportsIndex) -> None:
        """
        Records one measured service time.
        """
    def predict(self, batch: typing.SupportsInt | typing.SupportsIndex) -> float:
        """
        Predicted seconds; RuntimeError before any observation.
        """
    def table_mean(self, batch: typing.SupportsInt | typing.SupportsIndex) -> float:
        """
        Their running mean (NaN when none).
        """
    def uses_table(self, batch: typing.SupportsInt | typing.SupportsIndex) -> bool:
        """
        Whether predict(batch) returns the table's mean rather than the line.
        """
    @property
    def count(self) -> int:
        """
        Observations so far.
        """
    @property
    def intercept(self) -> float:
        """
        Seconds (NaN before 2 batch sizes).
        """
    @property
    def min_observations(self) -> int:
        ...
    @property
    def ready(self) -> bool:
        """
        Whether predict() has anything to go on.
        """
    @property
    def slope(self) -> float:
        """
        Seconds per item (NaN before 2 batch sizes).
        """
class BatchDone:
    """
    What on_batch_done reports: the worker is idle again.
    """
    @property
    def finish_s(self) -> float:
        ...
    @property
    def items(self) -> int:
        ...
    @property
    def measured_s(self) -> float:
        ...
    @property
    def model(self) -> int:
        ...
    @property
    def queries(self) -> int:
        ...
    @property
    def start_s(self) -> float:
        ...
    @property
    def worker(self) -> int:
        ...
class ClusterView:
    """
    The read-only cluster a policy sees. Workers are ids 0..num_workers-1; times are seconds (or _ns).
    """
    def accuracy(self, model: typing.Any) -> float:
        ...
    def busy_until(self, worker: typing.SupportsInt | typing.SupportsIndex) -> float:
        """
        When its current batch or load is predicted to end (now if idle), seconds.
        """
    def central_queue(self) -> list[int]:
        """
        Ids waiting in the central queue, oldest first (a copy).
        """
    def co_runners(self, worker: typing.SupportsInt | typing.SupportsIndex) -> int:
        """
        How many other instances on the worker's machine run a batch now.
        """
    def config(self, worker: typing.SupportsInt | typing.SupportsIndex, key: str, fallback: typing.SupportsInt | typing.SupportsIndex = 0) -> int:
        ...
    def free_resources(self, machine: typing.SupportsInt | typing.SupportsIndex) -> dict:
        """
        What its instances have not taken: cores and ways not in their knobs, memory not in their models.
        """
    def hardware(self, worker: typing.SupportsInt | typing.SupportsIndex) -> int:
        """
        The worker's hardware index.
        """
    def hardware_name(self, worker: typing.SupportsInt | typing.SupportsIndex) -> str:
        ...
    def has_model(self, worker: typing.SupportsInt | typing.SupportsIndex, model: typing.Any) -> bool:
        ...
    def idle_workers(self) -> list[int]:
        """
        The idle workers, ascending.
        """
    def instances(self, machine: typing.SupportsInt | typing.SupportsIndex) -> list[int]:
        """
        The workers (instances) the machine hosts, stopped ones included.
        """
    def is_idle(self, worker: typing.SupportsInt | typing.SupportsIndex) -> bool:
        ...
    def last_latency(self, worker: typing.SupportsInt | typing.SupportsIndex) -> float | None:
        """
        The last batch's measured latency in seconds (None before the first).
        """
    def machine(self, worker: typing.SupportsInt | typing.SupportsIndex) -> int:
        """
        The machine hosting the worker (without declared machines, each worker is its own).
        """
    def machine_resources(self, machine: typing.SupportsInt | typing.SupportsIndex) -> dict:
        """
        {'cores', 'memory_mb', 'accel_memory_mb', 'llc_ways', 'memory_bw_gbps'} (0: not modelled).
        """
    def max_batch(self, worker: typing.SupportsInt | typing.SupportsIndex, model: typing.Any) -> int:
        ...
    def model_index(self, name: str) -> int:
        ...
    def model_name(self, model: typing.SupportsInt | typing.SupportsIndex) -> str:
        ...
    def models(self, worker: typing.SupportsInt | typing.SupportsIndex) -> list[int]:
        """
        Indices of the models loaded on the worker.
        """
    def pick_model(self, worker: typing.SupportsInt | typing.SupportsIndex, query: Query) -> int:
        """
        The first model loaded on the worker that meets the query's accuracy floor and covers its size, or -1.
        """
    def predicted_latency(self, worker: typing.SupportsInt | typing.SupportsIndex, model: typing.Any, items: typing.SupportsInt | typing.SupportsIndex) -> float:
        """
        The profile's decision latency of a batch of `items` on the worker, seconds.
        """
    def query(self, id: typing.SupportsInt | typing.SupportsIndex) -> Query:
        ...
    def running_model(self, worker: typing.SupportsInt | typing.SupportsIndex) -> int:
        """
        The model of the worker's running batch, or -1.
        """
    def status(self, worker: typing.SupportsInt | typing.SupportsIndex) -> str:
        """
        'starting', 'idle', 'busy', 'loading' or 'stopped'.
        """
    def worker_queue(self, worker: typing.SupportsInt | typing.SupportsIndex) -> list[int]:
        """
        Ids waiting in the worker's own queue, oldest first (a copy).
        """
    def worker_queue_length(self, worker: typing.SupportsInt | typing.SupportsIndex) -> int:
        """
        How many ids wait in the worker's own queue (len(worker_queue(worker)), without the copy).
        """
    @property
    def now(self) -> float:
        ...
    @property
    def now_ns(self) -> int:
        ...
    @property
    def num_machines(self) -> int:
        ...
    @property
    def num_workers(self) -> int:
        ...
    @property
    def seed(self) -> int:
        ...
class Actions:
    """
    What a policy can do, only inside the hook that received it. Invalid actions raise ValueError; an action
    after the hook (or its run) has ended raises RuntimeError.
    """
    def add_instance(self, machine: typing.SupportsInt | typing.SupportsIndex, models: collections.abc.Sequence[typing.Any]) -> int:
        """
        A new instance of `models` on an existing machine (loading for their load time, then on_worker_ready);
        returns its worker id. ValueError when the machine's free memory cannot hold the models.
        """
    def add_worker(self, hardware: str, models: collections.abc.Sequence[typing.Any], startup_s: typing.SupportsFloat | typing.SupportsIndex = 0.0) -> int:
        ...
    def dispatch(self, worker: typing.SupportsInt | typing.SupportsIndex, model: typing.Any, queries: typing.Any) -> None:
        """
        Starts a batch now on an idle worker (queries: an id or a list of ids; model: index or name).
        """
    def drop(self, query: typing.SupportsInt | typing.SupportsIndex, reason: str) -> None:
        ...
    def enqueue(self, query: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        Appends the query to the central queue.
        """
    def enqueue_to_worker(self, worker: typing.SupportsInt | typing.SupportsIndex, query: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def load_model(self, worker: typing.SupportsInt | typing.SupportsIndex, model: typing.Any) -> None:
        ...
    def remove_worker(self, worker: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def set_config(self, worker: typing.SupportsInt | typing.SupportsIndex, key: str, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        A named integer knob; 'cores' and 'llc_ways' partition the worker's machine and must fit what it has left.
        """
    def set_timer(self, at_s: typing.SupportsFloat | typing.SupportsIndex, tag: typing.SupportsInt | typing.SupportsIndex = 0) -> None:
        """
        Asks for on_timer(tag, ...) at time at_s (seconds, >= now).
        """
    def unload_model(self, worker: typing.SupportsInt | typing.SupportsIndex, model: typing.Any) -> None:
        ...
class Scheduler:
    """
    Base class of every policy. Subclass it in Python and override on_arrival (required) and any of
    on_start, on_batch_done, on_timer, on_worker_ready; each receives (..., view, actions). The same
    object runs in servelab.simulate and servelab.serve. Call super().__init__() in __init__.
    """
    def __init__(self) -> None:
        ...
    def __repr__(self) -> str:
        ...
    def describe(self) -> str:
        ...
class Executor:
    """
    One worker's executor, opened from an ExecutorBuilder.
    """
    def check_batch_memory(self, items: typing.SupportsInt | typing.SupportsIndex, *, caller_bytes: typing.SupportsFloat | typing.SupportsIndex, given: str, field: str) -> None:
        """
        MemoryError naming `given` and `field` unless a batch of `items` items (a query id each, the
        executor's inputs and `caller_bytes` per item that the caller holds) fits the memory available.
        """
    def describe(self) -> str:
        ...
    def knobs(self) -> list[str]:
        """
        The ClusterView.config knobs it reads per batch (set_config).
        """
    def time_batches(self, sizes: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex], *, repeats: typing.SupportsInt | typing.SupportsIndex = 1, warmup: typing.SupportsInt | typing.SupportsIndex = 0, config: collections.abc.Mapping[str, typing.SupportsInt | typing.SupportsIndex] = {}) -> dict:
        """
        Runs one batch (items per query in `sizes`) `warmup` times untimed, then `repeats` times; returns
        {'wall_ns', 'exec_ns'} arrays (exec: the executor's own measure, else wall). Each run uses fresh
        query ids. Releases the GIL; Ctrl-C stops it between batches.
        """
    @property
    def bytes_per_item(self) -> float:
        """
        Bytes a batch's run allocates per item (its inputs); 0: not known.
        """
class ExecutorBuilder:
    """
    An executor made from a spec (make_executor): one per worker group, asked for one Executor per worker.
    """
    def __repr__(self) -> str:
        ...
    def describe(self) -> str:
        ...
    def open(self, worker: typing.SupportsInt | typing.SupportsIndex = 0, seed: typing.Any = 0) -> Executor:
        """
        An Executor outside a serving run (as the profiler uses one); `seed` seeds its per-query inputs.
        """
class ExecutorBatch:
    """
    One batch handed to a Python executor's run(batch). It owns copies of its data: keeping it after
    run() returns is safe.
    """
    def __len__(self) -> int:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def config(self) -> dict[str, int]:
        """
        The worker's knobs (the executor's `knobs`) as set when the batch was dispatched.
        """
    @property
    def hardware(self) -> int:
        """
        The worker's hardware index in the run's profile.
        """
    @property
    def inputs(self) -> typing.Any:
        """
        Each query's input given to serve(inputs=...) (a row of the array, or what the callable
        returned), in query order; None when the run has no inputs.
        """
    @property
    def items(self) -> int:
        """
        Items in the batch (the sum of sizes).
        """
    @property
    def model(self) -> int:
        """
        The model's index in the run's profile.
        """
    @property
    def model_name(self) -> str:
        """
        The model's name ('' outside a serving run).
        """
    @property
    def queries(self) -> numpy.typing.NDArray[numpy.int64]:
        """
        Query ids (int64 array).
        """
    @property
    def sizes(self) -> numpy.typing.NDArray[numpy.int32]:
        """
        Items of each query (int32 array, parallel to queries).
        """
    @property
    def stop_requested(self) -> bool:
        """
        True once the run ends or stops (Ctrl-C) while the batch runs: return early if you can.
        """
    @property
    def worker(self) -> int:
        """
        The worker running the batch.
        """
class PythonExecutorBuilder(ExecutorBuilder):
    """
    An executor written in Python (register_executor), made from a spec.
    """
class QueryInputs:
    """
    User-supplied per-query inputs for servelab.serve(inputs=...): an array with one row per query (query q
    takes row q), or a callable of the query id returning its input.
    """
    def __init__(self, source: typing.Any) -> None:
        ...
    def check_float_rows(self, width: typing.SupportsInt | typing.SupportsIndex, executor: str) -> None:
        """
        ValueError naming `executor` unless it can read float32 rows of `width` features (the whole
        array, or the callable's answer for query 0).
        """
    def check_sendable(self, executor: str) -> None:
        """
        ValueError naming `executor` unless the inputs can be sent to a worker process (numeric arrays
        and numpy scalars: the array's dtype, or the callable's answer for query 0).
        """
    def describe(self) -> str:
        ...
    def float_rows(self, queries: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex], sizes: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex], width: typing.SupportsInt | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.float32]:
        """
        The float32 rows [sum(sizes), width] an executor such as torchscript reads for these queries.
        """
    @property
    def rows(self) -> int:
        """
        The array's rows, or -1 for a callable.
        """
class WorkerGroup:
    """
    `count` identical workers of one hardware type.
    """
    def __init__(self, hardware: str, count: typing.SupportsInt | typing.SupportsIndex = 1, models: collections.abc.Sequence[str] = [], config: typing.Any = {}, machine: str = '') -> None:
        """
        models: names loaded on each worker (empty: every model the profile has on this hardware);
        config: initial integer knobs (e.g. {'intra_op_threads': 4}); machine: a MachineGroup's name
        (count instances on each of its machines; empty: each worker is a machine of its own).
        """
    def __repr__(self) -> str:
        ...
    @property
    def config(self) -> dict[str, int]:
        ...
    @property
    def count(self) -> int:
        ...
    @property
    def hardware(self) -> str:
        ...
    @property
    def machine(self) -> str:
        ...
    @property
    def models(self) -> list[str]:
        ...
class MachineGroup:
    """
    `count` identical machines that worker groups place instances on (co-location).
    """
    def __init__(self, name: str, count: typing.SupportsInt | typing.SupportsIndex = 1, hardware: str = '', cores: typing.SupportsInt | typing.SupportsIndex = 0, memory_mb: typing.SupportsFloat | typing.SupportsIndex = 0.0, accel_memory_mb: typing.SupportsFloat | typing.SupportsIndex = 0.0, llc_ways: typing.SupportsInt | typing.SupportsIndex = 0, memory_bw_gbps: typing.SupportsFloat | typing.SupportsIndex = 0.0) -> None:
        """
        Resources of 0 are not modelled (no limit). hardware: empty takes its worker groups' (one type per
        machine).
        """
    def __repr__(self) -> str:
        ...
    @property
    def count(self) -> int:
        ...
    @property
    def hardware(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
class ConfigModel:
    """
    How a worker's set_config knobs scale its simulated service times (make_config_model).
    """
    def __repr__(self) -> str:
        ...
    def describe(self) -> str:
        ...
class LoopModel:
    """
    The serving loop's own delays, for the simulator (make_loop_model; servelab.calibrate).
    """
    def __repr__(self) -> str:
        ...
    def describe(self) -> str:
        ...
class InterferenceModel:
    """
    How co-located instances slow each other down, for the simulator (make_interference_model).
    """
    def __repr__(self) -> str:
        ...
    def describe(self) -> str:
        ...
class ServingSession:
    """
    The serving loop fed by submissions (use servelab.Session). Starts on construction.
    """
    def __init__(self, profile: Profile, workers: collections.abc.Sequence[WorkerGroup], workload: Workload, scheduler: typing.Any, *, seed: typing.Any = 0, decision_statistic: str = 'mean', service: str = 'sample', drain_s: typing.SupportsFloat | typing.SupportsIndex = 3600.0, executors: collections.abc.Sequence[ExecutorBuilder] | None = None, spin_us: typing.SupportsFloat | typing.SupportsIndex = 200.0, batch_timeout_ms: typing.SupportsFloat | typing.SupportsIndex | None = None, cores: collections.abc.Sequence[collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]] | None = None, llc: str | None = None, llc_root: str | None = None, machines: collections.abc.Sequence[MachineGroup] = [], machine_cores: collections.abc.Sequence[collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]] | None = None) -> None:
        ...
    def abort(self) -> None:
        """
        Ends the loop at once, dropping what is queued or running.
        """
    def close(self) -> None:
        """
        Stops taking submissions; the loop drains and ends.
        """
    def result(self) -> dict:
        """
        The run's result dict, once the loop has ended (or its error).
        """
    def submit(self, app: typing.SupportsInt | typing.SupportsIndex, size: typing.SupportsInt | typing.SupportsIndex, inputs: typing.Any, done: typing.Any) -> None:
        """
        Submits one query; done(outcome_tuple) is called once, on the loop's thread, when it ends.
        """
    def wait(self, timeout_s: typing.SupportsFloat | typing.SupportsIndex) -> bool:
        """
        Waits for the loop to end; True if it has.
        """
class RemoteWorker:
    """
    A worker process's server: listens at `listen` ('unix:PATH' or 'tcp:HOST:PORT'; port 0: any free
    one) and runs the batches that `remote` executors send, on `executor` (an ExecutorBuilder).
    """
    def __init__(self, listen: str, executor: ExecutorBuilder, *, allow_remote: bool = False, inputs: str = 'none', width: typing.SupportsInt | typing.SupportsIndex = 0, max_connections: typing.SupportsInt | typing.SupportsIndex = 64, hello_timeout_s: typing.SupportsFloat | typing.SupportsIndex = 10.0, message_timeout_s: typing.SupportsFloat | typing.SupportsIndex = 30.0) -> None:
        """
        `inputs`: which of a run's inputs the executor reads ('none', 'arrays' for an executor written in
        Python, 'float_rows' of `width` features for torchscript), told to each controller.
        At most `max_connections` connections are served at once (one more is refused, naming the limit); a
        connection must send its hello within hello_timeout_s and finish each message it starts within
        message_timeout_s, or it is closed; a message's body is allocated as its bytes arrive.
        """
    def serve(self) -> None:
        """
        Serves until stop() or Ctrl-C (KeyboardInterrupt); connections are closed and their threads joined
        before it returns. Releases the GIL.
        """
    def stop(self) -> None:
        """
        Makes serve() return (from another thread).
        """
    @property
    def address(self) -> str:
        """
        The bound address (a TCP port 0 resolved).
        """
    @property
    def executor(self) -> str:
        """
        The hosted executor's spec.
        """
def abandoned_worker_threads() -> int:
    """
    Worker threads that serving runs gave up on (batch_timeout_ms) and that still run a batch; joins
    those whose batch has returned since.
    """
def build_info() -> dict:
    """
    What this build was compiled with (servelab.build_info() adds what is usable now).
    """
def extend_executors(name: str, factory: typing.Any, params: collections.abc.Sequence[dict], doc: str, module: str) -> None:
    """
    Adds an executor written in Python: factory(**params) returns a fresh executor object per worker.
    """
def extend_schedulers(name: str, factory: typing.Any, params: collections.abc.Sequence[dict], doc: str) -> None:
    """
    Adds a Python policy to the scheduler registry: factory(**params) returns a fresh Scheduler.
    """
def kairos_sizes(round_to: typing.SupportsInt | typing.SupportsIndex = 10) -> SizeMixture:
    """
    The Kairos artifact's query sizes (helper.random_samp): with probability 8/99 U{1..99}, 22/99 U{200..599},
    5/99 U{600..999}, otherwise lognormal(mu=5.1, sigma=0.2) kept if in [100, 200] else U{190..199}; rounded up
    to a multiple of round_to (the artifact: 10). Registry name: 'kairos_mix'.
    """
def list_arrival_processes() -> list:
    """
    Every registered arrival_process: name, doc and typed parameters.
    """
def list_config_models() -> list:
    """
    Every registered config_model: name, doc and typed parameters.
    """
def list_executors() -> list:
    """
    Every executor registered so far: name, doc, typed parameters and the module that added it.
    """
def list_interference_models() -> list:
    """
    Every registered interference_model: name, doc and typed parameters.
    """
def list_loop_models() -> list:
    """
    Every registered loop_model: name, doc and typed parameters.
    """
def list_schedulers() -> list:
    """
    Every registered scheduler: name, doc and typed parameters.
    """
def list_size_distributions() -> list:
    """
    Every registered size_distribution: name, doc and typed parameters.
    """
def make_arrival_process(spec: str, **kwargs) -> ArrivalProcess:
    """
    Builds a arrival_process from 'name(a=1, ...)' or a name plus keyword arguments.
    """
def make_config_model(spec: str, **kwargs) -> ConfigModel:
    """
    Builds a config_model from 'name(a=1, ...)' or a name plus keyword arguments.
    """
def make_executor(spec: str, **kwargs) -> ExecutorBuilder:
    """
    An ExecutorBuilder from 'name(a=1, ...)' or a name plus keyword arguments.
    """
def make_interference_model(spec: str, **kwargs) -> InterferenceModel:
    """
    Builds a interference_model from 'name(a=1, ...)' or a name plus keyword arguments.
    """
def make_loop_model(spec: str, **kwargs) -> LoopModel:
    """
    Builds a loop_model from 'name(a=1, ...)' or a name plus keyword arguments.
    """
def make_scheduler(spec: str, **kwargs) -> Scheduler:
    """
    Builds a scheduler from 'name(a=1, ...)' or a name plus keyword arguments.
    """
def make_size_distribution(spec: str, **kwargs) -> SizeDistribution:
    """
    Builds a size_distribution from 'name(a=1, ...)' or a name plus keyword arguments.
    """
def read_azure_functions_counts(path: os.PathLike | str | bytes, function: str | None = None, time_scale: typing.SupportsFloat | typing.SupportsIndex = 1.0, repeat: bool = False) -> PiecewiseRate:
    """
    A per-minute PiecewiseRate (interval 60 s, rate = count/60) from an Azure Functions 2019
    invocations_per_function_md.anon.d*.csv file: the sum of all rows, or of the rows whose HashFunction is
    `function` (KeyError if none). Errors name the file and line.
    """
def read_gaps_csv(path: os.PathLike | str | bytes, unit: str = 's') -> numpy.typing.NDArray[numpy.float64]:
    """
    Inter-arrival gaps, one per line (optional header line, '#' comments), in unit 's', 'ms', 'us' or 'ns'.
    Returns float64 seconds (non-negative). Errors name the file and line. Replay.from_gaps() replays them.
    """
def read_rate_trace(path: os.PathLike | str | bytes, time_scale: typing.SupportsFloat | typing.SupportsIndex = 1.0, repeat: bool = False) -> PiecewiseRate:
    """
    A PiecewiseRate from 't rate' lines (t seconds, equally spaced; rate queries/s), like RAMSIS's Twitter
    trace. Errors name the file and line.
    """
def read_timestamps_csv(path: os.PathLike | str | bytes, unit: str = 's') -> numpy.typing.NDArray[numpy.float64]:
    """
    Arrival timestamps, one per line (optional header line, '#' comments), in unit 's', 'ms', 'us' or 'ns'.
    Returns float64 seconds; they must be non-negative and non-decreasing. Errors name the file and line.
    """
def remote_hosted(builder: ExecutorBuilder) -> typing.Any:
    """
    For a `remote` executor: what its worker process hosts, asked over a connection of its own
    ({'executor', 'inputs': 'none' | 'arrays' | 'float_rows', 'width'}); None for any other executor.
    RuntimeError naming the address when unreachable. Releases the GIL.
    """
def remote_transport() -> dict:
    """
    Every query that this process's remote executors sent since the last call, one row each:
    {'address', 'worker', 'query', 'batch', 'round_trip_ns' (at the controller), 'worker_ns' (on the
    worker, -1: no reply), 'ok'}, plus 'batches_not_kept' (past the log's limit). Empties the log.
    """
def retract_executor(name: str) -> None:
    """
    Removes an executor added with extend_executors (KeyError for any other name).
    """
def retract_scheduler(name: str) -> None:
    """
    Removes a policy added with extend_schedulers (KeyError for a built-in or unknown name).
    """
def ribbon_sizes(round_to: typing.SupportsInt | typing.SupportsIndex = 1) -> SizeMixture:
    """
    The Ribbon artifact's query sizes (query/functions.py random_samp): with probability 2/99 U{1..99},
    10/99 U{250..499}, otherwise lognormal(mu=5.1, sigma=0.2), replaced by U{400..499} above 500; rounded to
    the nearest integer as its simulator's round(sample). Registry name: 'ribbon_mix'.
    """
def serve_run(profile: Profile, workers: collections.abc.Sequence[WorkerGroup], workload: Workload, scheduler: Scheduler, *, seed: typing.Any = 0, decision_statistic: str = 'mean', service: str = 'sample', drain_s: typing.SupportsFloat | typing.SupportsIndex = 3600.0, executors: collections.abc.Sequence[ExecutorBuilder] | None = None, spin_us: typing.SupportsFloat | typing.SupportsIndex = 200.0, inputs: QueryInputs = None, batch_timeout_ms: typing.SupportsFloat | typing.SupportsIndex | None = None, cores: collections.abc.Sequence[collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]] | None = None, llc: str | None = None, llc_root: str | None = None, machines: collections.abc.Sequence[MachineGroup] = [], machine_cores: collections.abc.Sequence[collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]] | None = None) -> dict:
    """
    Runs the real serving loop on the wall clock (one thread per worker); returns {'columns', 'workers',
    'meta'} like simulate_run, with meta['world'] == 'serve' and the extra column 'exec_ns' (each query's
    batch as its executor measured it, -1 unless completed). `executors`: one ExecutorBuilder (or None:
    emulated, waiting the profiled latency) per worker group. A batch whose executor raises ends its
    queries dropped with the error as the reason; the run goes on. `spin_us`: how long before each arrival
    or timer the controller spins rather than sleeps (0: never, leaving the cores to the executors). Takes the workload's duration in wall
    time. Releases the GIL (Python schedulers take it back per hook); Ctrl-C stops it and joins every
    worker thread. `inputs`: a QueryInputs (the user's per-query inputs) handed to every batch, or None.
    `batch_timeout_ms`: a batch that has not returned after this long ends its queries dropped (the reason
    names the executor, the worker and the timeout), its worker leaves the cluster for the rest of the run
    and its thread is abandoned; None: no timeout. `cores`: per worker group, the cores its workers are
    pinned to in turn ([]: not pinned; None: nobody is); meta['pinning'] then lists what each worker applied.
    `machine_cores`: per declared machine (ids group by group), the host cores it has ([]: not pinned); its
    instances divide them by their 'cores' knob and each worker thread re-pins itself when its share changes.
    `llc`: 'resctrl' applies each worker's llc_ways setting to the L3 through resctrl under `llc_root`
    (None: /sys/fs/resctrl), each worker thread before its next batch; meta['llc'] says 'unsupported: <reason>'
    or lists the groups, masks and ways applied. None: nothing is applied.
    """
def simulate_run(profile: Profile, workers: collections.abc.Sequence[WorkerGroup], workload: Workload, scheduler: Scheduler, *, seed: typing.Any = 0, decision_statistic: str = 'mean', service: str = 'sample', drain_s: typing.SupportsFloat | typing.SupportsIndex = 3600.0, records: str = 'all', config_model: typing.Any = None, loop_model: typing.Any = None, machines: collections.abc.Sequence[MachineGroup] = [], interference: typing.Any = None) -> dict:
    """
    Runs the discrete-event simulator; returns {'columns', 'workers', 'meta'} (see servelab.simulate),
    and 'streamed' (online summaries) when records is 'none' or 'sample(p)'. config_model: None (profiled
    service times) or a config model (spec or make_config_model) scaling them by the workers' knobs.
    loop_model: None (an instantaneous loop) or a loop model (spec or make_loop_model): the serving loop's
    delays (wake, notice, arrival) added to the simulated world. machines: the MachineGroups worker groups
    place instances on; interference: None or an interference model (spec or make_interference_model):
    how instances running at once on one machine slow each other down.
    Releases the GIL (Python schedulers take it back per hook); Ctrl-C stops it.
    """
def zipf_shares(n: typing.SupportsInt | typing.SupportsIndex, exponent: typing.SupportsFloat | typing.SupportsIndex = 1.0) -> numpy.typing.NDArray[numpy.float64]:
    """
    Zipf popularity of n applications: share[i] proportional to 1 / (i + 1)**exponent, normalised to sum to 1
    (float64 array). exponent 0 gives equal shares.
    """
_executor_plugins: typing.Any
