// Package transport holds skiffctl's HTTP round tripper that shows the
// requests it sends, by verbosity: at 6 one line per request with its status
// and duration, at 7 the headers too, at 8 the request and response bodies
// (truncated), at 9 and above each request as a curl command that can be run
// as it stands, with the client certificate flags (--cacert, --cert, --key).
package transport
