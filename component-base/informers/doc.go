// Package informers holds what the daemons' informers share.
package informers
