// Package testutil builds nodes and pods for the plugins' table tests.
package testutil
