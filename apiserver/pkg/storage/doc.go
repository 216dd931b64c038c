// Package storage defines what the API server's generic registry needs from a
// storage backend: the sentinel errors, preconditions, list options with a
// selection predicate, and the Interface implemented over etcd (package etcd3)
// and served to watchers through an in-memory window (package cacher).
//
// Errors are a handful of sentinels (ErrNotFound, ErrAlreadyExists,
// ErrConflict, ErrGone, ErrUnavailable, ErrTimeout, ErrInvalid) wrapped with
// %w; the REST layer turns them into HTTP codes and metav1.Status in one
// place.
package storage
