// Package apply computes client-side apply as kubectl does it, so that
// skiffctl and kubectl can take over each other's objects: the
// kubectl.kubernetes.io/last-applied-configuration annotation holds the JSON
// of the applied manifest (without that annotation, with "annotations":{}
// when there are no others, and a trailing newline, exactly as kubectl writes
// it), and an update is the three-way patch between that last-applied
// configuration, the new manifest and the live object: a strategic merge
// patch for the kinds compiled into client-go, a JSON merge patch for the
// others. Fields that were in the last-applied configuration and are no
// longer in the manifest are removed; fields that others set are kept.
package apply
