// Package fastpath holds the API server's fast paths: code that gives the
// same bytes or the same result as a library or the plain code, at less
// cost. Each is here only because removing it costs at least 5% on the
// end-to-end benchmark (docs/benchmarks.md, "API server", "Fast paths",
// gives the measured figures and their commands); a fast path that no
// longer earns 5% end to end is removed in favour of the plain code. Each
// has beside it the differential test that compares it with the code it
// stands in for, and each is turned off at the one call site named below.
// What a fast path needs it takes as arguments and gives back as return
// values, never through the request context.
//
// The fast paths, with what removing each cost end to end:
//
//   - RequestWorkers (workers.go) runs short requests on goroutines that
//     outlive one request, bypassing net/http's fresh goroutine per HTTP/2
//     stream and the stack growth it repeats. Removing it: +7.8% CPU per
//     protobuf create, +1.1% per JSON create. Used by the server's handler
//     chain (server.Server.buildHandler, which turns it off by not wrapping
//     the chain). Test: TestRequestWorkersAnswerAsThePlainHandler.
//
//   - RouteTable (routes.go) finds the handler of a built-in resource's
//     path by a map lookup, bypassing gorilla/mux's route-by-route regular
//     expressions for those paths; every other path goes to the router.
//     Removing it: +7.5% / +6.7% CPU per protobuf / JSON create (median of
//     15 rounds; 12 of them alone gave +2.9% / +4.6%). Filled by
//     endpoints.Handler.Install, served through endpoints.Handler.Routes
//     in server.Server.buildHandler (which turns it off by serving the
//     router itself). Tests: TestRoutesPickWhatMuxPicks (every built-in
//     route against gorilla/mux's match), TestRouteTableServesAsMux (the
//     answers through the table and through the router alone).
//
//   - The create hand-off (asdecoded.go, storedencoding.go): a create's
//     object is kept by the watch cache made to look as its decoding from
//     storage would (AsDecoded; not for the groups whose decoding applies
//     defaults, DecodingDefaults), bypassing the decoding of the bytes
//     etcd's watch brings back, and a protobuf client's answer is the bytes
//     written with the resourceVersion put in (ParseStored,
//     StoredObject.AppendWithResourceVersion), bypassing a second encoding.
//     Removing it: +7.3% / +6.0% CPU per protobuf / JSON create. Used by
//     cacher.Cacher.CreateHandedOver and endpoints' respondWritten, turned
//     off by cacher.Config.KeepCreated (set in server.Setup).
//     Tests: TestAsDecodedIsTheRoundTrip, TestDecodingDefaults,
//     TestWithResourceVersionIsTheEncoding, FuzzParseStored; with the
//     callers, cacher's TestCreateHandedOverIsTheDecoding (real etcd) and
//     endpoints' TestRespondWritten.
//
//   - CreateFields (createfields.go, createplan.go, createwalk.go) records
//     the managed fields of a create of a built-in kind by one walk of the
//     Go object, bypassing structured-merge-diff's comparison with the
//     empty object. Removing it: +16% / +15% CPU per protobuf / JSON
//     create. Used by fieldmanager.Manager.Create, which falls back to
//     upstream's UpdateNoErrors for anything it does not mirror exactly;
//     turned off where fieldmanager makes a Manager (no CreateFields).
//     Tests: TestCreateMatchesUpdateFuzzed, TestCreateMatchesUpdateEdgeCases.
//
//   - JSONList (jsonlist.go) joins a JSON LIST from the watch cache's
//     encodings of its items, bypassing encoding every item again.
//     Removing it: +33% time per JSON LIST of 10,000 pods (consistent),
//     +23% with resourceVersion=0. Used by endpoints' listJSON, which the
//     list handler calls first. Test: TestJSONListIsTheSerializers.
package fastpath
