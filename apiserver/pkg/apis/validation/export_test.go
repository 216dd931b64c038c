package validation

// What the external tests of the kinds (kinds_test.go) share with the
// package's own tests.
type Want = want

var (
	CheckErrs   = checkErrs
	NS          = ns
	Q           = q
	WithRestart = withRestart
)
