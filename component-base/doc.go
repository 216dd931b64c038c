// Package componentbase is the small module of code every skiff daemon
// shares. Only what two or more daemons need belongs here.
package componentbase
