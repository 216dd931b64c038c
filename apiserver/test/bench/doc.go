// Command bench measures skiff-apiserver the way its users load it and
// prints figures that docs/benchmarks.md records. It is a program, not a
// timed test: `make bench` runs it (`cd apiserver && go run ./test/bench`).
//
// It starts a real API server in-process (pkg/testserver: HTTPS on loopback,
// embedded etcd in a temporary directory) and drives it through client-go,
// each simulated client on its own HTTP/2 connection, as separate processes
// would be:
//
//   - create: 16 clients create small Pods (one container, labels) as fast
//     as they can, once with protobuf and once with JSON (what kubectl
//     sends): creates/s and p50/p99 latency.
//   - etcd: the baseline. 16 goroutines write values the size of one stored
//     Pod (the real bytes under /registry/pods/...) as create-if-absent
//     transactions, the write the API server does, against the same embedded
//     etcd through a gRPC client on its client URL; and, for comparison,
//     through the in-process client the server itself uses. The ratio of
//     API creates/s to etcd writes/s is the server's overhead.
//   - floor: the ceiling of the create target. The same clients create
//     Pods on an HTTPS server (Go's net/http, HTTP/2) with one handler
//     that decodes the Pod, writes it to the same etcd with the same
//     transaction and client as skiff, and answers with it encoded: what
//     any Kubernetes API server must at least do per create, without
//     authentication, admission, validation, managed fields or a watch
//     cache. Its creates/s over etcd's, and skiff's over its.
//   - list: the time client-go takes to LIST 10,000 Pods of one namespace,
//     consistent (resourceVersion unset) and resourceVersion=0, in JSON and
//     protobuf; min and median of several runs.
//   - watch: 100 watchers (each its own connection) on one namespace, then
//     ConfigMap updates that carry their send time in an annotation; each
//     watcher records receive time minus send time: p50/p99/max; and the
//     delay in parts, each p50/p99 over the updates: the update's own
//     request, the first watcher's delay, and the spread from the first
//     watcher to the last.
//   - update: 16 clients update the status of 1,000 Pods, 10,000 updates in
//     all, as kubelets report a running pod (each client owns its share and
//     sends the object its previous update answered), protobuf then JSON:
//     updates/s and p50/p99 latency.
//   - chain: the cost of authorization and admission (issue 3). Three
//     servers at once, each a process of its own (the bench binary run as
//     "chain-server") with its own etcd: Node,RBAC with every admission
//     plugin; AlwaysAllow without admission; and the latter sent the pod as
//     the chain stores it. They take protobuf pod creates by an
//     RBAC-authorized user in turns; creates/s of each, each server
//     process's CPU time and allocations per create, the cost and its split
//     into the larger pod and the chain's own code, median over
//     -chain-rounds rounds. The target's verdict rests on a 95% confidence
//     interval of the median cost (distribution-free, from the rounds'
//     order statistics; six rounds or more): met when it lies below 10%,
//     not met when it lies at or above, not shown when it spans 10%. With
//     -chain-padded, a fourth server without the chain is sent the bench
//     pod padded with an annotation to the admitted pod's size: what the
//     larger pod's bytes alone cost. With -chain-trace, every slice is
//     logged with its creates/s and the server's CPU time and garbage
//     collections during it.
//   - chainfloor: the floor of the chain's cost. Two floor servers that
//     decode, default, validate, store and answer a pod, and decode every
//     stored pod from an etcd watch; one adds what the chain adds. In
//     turns, as in the chain phase: how much slower the chain's pod alone
//     makes a server that does nothing else.
//
// It prints a machine summary, then a markdown table to paste into
// docs/benchmarks.md. Progress and server logs go to stderr.
//
// The server runs in this process, so -cpuprofile profiles it together with
// the clients; samples carry the pprof label side=server or side=client
// (and phase=<name> on the client side), so
//
//	go tool pprof -tagfocus side=server -top cpu.pprof
//
// shows the server alone. -run selects phases (e.g. -run list).
package main
