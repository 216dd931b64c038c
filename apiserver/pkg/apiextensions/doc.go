// Package apiextensions serves CustomResourceDefinitions
// (apiextensions.k8s.io/v1) and the custom resources they define: the CRD
// kind with upstream's validation and defaults, the structural schema of a
// version (validation with every violation named, x-kubernetes-validations
// rules evaluated with cel-go, pruning of unknown fields, defaults,
// selectable fields), the in-server controller that accepts names, sets the
// Established condition and starts serving a CRD's resources from the
// generic store, and the cleanup that deletes every instance before a CRD
// goes (finalizer customresourcecleanup.apiextensions.k8s.io).
//
// Custom resources are stored as JSON under
// /registry/<group>/<plural>/[<namespace>/]<name>, in the storage version;
// the other served versions are views of the same objects with apiVersion
// rewritten (conversion strategy None).
package apiextensions
