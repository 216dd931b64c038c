// Package localpath is skiff's local-path provisioner, run by every kubelet
// for its own node (as k3s bundles rancher's local-path-provisioner, but
// inside the daemon: no image to pull).
//
// The PersistentVolume binder hands a claim of a class whose provisioner is
// skiff.dev/local-path to it through the volume.kubernetes.io/storage-provisioner
// annotation once the scheduler has written volume.kubernetes.io/selected-node;
// the kubelet of that node creates the directory
// <dir>/pvc-<claim uid>_<namespace>_<claim> (mode 0777, as k3s's, so a
// container of any user may write) and a PersistentVolume pvc-<claim uid>
// pre-bound to the claim: a `local` source on that directory, required node
// affinity on kubernetes.io/hostname, the class's reclaim policy, the
// claim's capacity and access modes, pv.kubernetes.io/provisioned-by. The
// binder then binds the two. When such a volume of this node is Released
// and its policy is Delete, the kubelet removes the directory and deletes
// the volume. Events on the claim say what happened, with the
// external-provisioner's reasons (Provisioning, ProvisioningSucceeded,
// ProvisioningFailed).
package localpath
