// Package images turns the image names of pod specs into full references
// (busybox -> docker.io/library/busybox:latest) and reads the registry
// mirrors and credentials file in k3s's registries.yaml format, from which
// it builds the host list that containerd's resolver pulls through.
package images
