// The tools of `make conformance`: the image builder, the pause program and
// the summary of a run. Standard library only. Not in go.work: the scripts
// build it with GOWORK=off.
module skiff.dev/conformance

go 1.24.0
