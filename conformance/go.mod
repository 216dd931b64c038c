// The tools of `make conformance`: the image builder, the pause program and
// the summary of a run. Standard library only. In go.work, so make vet and
// make test check it; the scripts build it with GOWORK=off all the same.
module skiff.dev/conformance

go 1.24.0
