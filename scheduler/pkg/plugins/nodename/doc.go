// Package nodename holds the NodeName filter: a pod that names a node in
// spec.nodeName fits only that node.
package nodename
