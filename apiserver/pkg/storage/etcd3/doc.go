// Package etcd3 implements storage.Interface over etcd v3.
//
// Objects are stored under their key as upstream stores them: protobuf inside
// the "k8s\x00" envelope (apimachinery's protobuf serializer), without a
// resourceVersion. The resourceVersion a client sees is the key's etcd
// mod_revision; a list's is the revision it was read at. Every write is a
// transaction conditioned on the revision read before it (compare-and-swap):
// Create requires the key to be absent, GuaranteedUpdate and Delete require
// the key to be unchanged since it was read and retry on a race, so no update
// is ever lost.
package etcd3
