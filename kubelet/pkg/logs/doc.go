// Package logs writes and reads container logs in the CRI log format that
// upstream's kubelet uses: one record per line,
//
//	<RFC3339Nano time> <stdout|stderr> <F|P> <content>
//
// where F ends a line and P is a part of a line longer than MaxLineSize.
//
// The writer side runs as a containerd "binary" logging driver: the shim
// starts the kubelet's own executable with the DriverArg argument and the
// container's stdout and stderr on file descriptors 3 and 4 (DriverMain),
// so logs keep flowing while the kubelet restarts. The reader side
// (Read) serves the kubelet's /containerLogs API: tail, since, timestamps,
// byte limit and follow.
package logs
