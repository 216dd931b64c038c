// Package ttlafterfinished is the TTL-after-finished controller: it deletes
// each finished Job (Complete or Failed) ttlSecondsAfterFinished after the
// time its final condition was set, with propagationPolicy Foreground so
// its pods go first, as upstream's pkg/controller/ttlafterfinished does.
//
// Jobs with a TTL are queued when they finish; a sync computes the time
// left, requeues the Job for then when it is positive, and otherwise reads
// the Job afresh from the API server (the TTL may have just changed) and
// deletes it with a UID precondition, so a new Job of the same name is
// never deleted by mistake. The clock is injectable for tests.
package ttlafterfinished
