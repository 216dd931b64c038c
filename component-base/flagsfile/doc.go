// Package flagsfile gives every skiff daemon the same configuration file:
// --flags-file FILE names a YAML mapping whose keys are the daemon's own flag
// names (without the dashes) and whose values are what the flag would be
// given on the command line. A flag given on the command line wins over the
// file; a flag in neither keeps its default. A list sets a repeatable flag
// once per element; a mapping sets a key=value flag as k1=v1,k2=v2. An
// unknown key, a duplicate key or a value the flag rejects is an error naming
// the file, its line and the flag, and the daemon does not start.
//
// The file holds exactly what --help lists, so one page of documentation
// (--help) serves both; the systemd units under deploy/ pass one
// --flags-file per daemon.
package flagsfile
