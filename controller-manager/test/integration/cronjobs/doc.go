// Package cronjobs holds the integration tests of the CronJob controller
// against a real API server (testserver): the controller runs from its
// package with a fake clock that the tests move from one schedule time to
// the next, the tests play the Job controller by writing Job status, and
// one test runs the real controller manager (cmtest) on the real clock
// with a "* * * * *" schedule.
package cronjobs
