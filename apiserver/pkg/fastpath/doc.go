// Package fastpath holds the API server's fast paths: code that gives the
// same bytes or the same result as a library or the plain code, at less
// cost. Each is here only because removing it costs at least 5% on the
// end-to-end benchmark (docs/benchmarks.md, "API server", gives the
// measured figures), and each has beside it the differential test that
// compares it with the code it stands in for. What a fast path needs it
// takes as arguments and gives back as return values.
package fastpath
