// Package ephemeral is the generic ephemeral volume controller
// ("ephemeral-volume" in --controllers), after upstream's
// pkg/controller/volume/ephemeral: for every `ephemeral` volume of a pod it
// creates the claim <pod>-<volume> from the volume's claim template, owned
// (controller, blockOwnerDeletion) by the pod, so the claim is bound and
// provisioned like any other and the garbage collector deletes it with the
// pod. A claim of that name that the pod does not own is not touched: the
// pod gets a FailedBinding event saying so.
package ephemeral
