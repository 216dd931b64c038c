// Package leaderelection runs a daemon's active part only while it holds a
// Lease, so that of several replicas on several machines exactly one acts:
// the flags under upstream's names, and Run, which returns when the context
// ends or leadership is lost (an error, as upstream's daemons treat it: the
// process exits and a supervisor restarts it as a follower).
package leaderelection
