// Package imagelocality is upstream's ImageLocality score plugin: nodes that
// already have the pod's images (node.status.images) score higher, by the
// images' sizes scaled by how many nodes have them.
package imagelocality
