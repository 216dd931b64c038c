// Package app is skiff-apiserver's command: flags, validation, and running
// the server built by package server until a signal arrives.
package app
