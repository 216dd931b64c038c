// Package config reads upstream's KubeSchedulerConfiguration
// (kubescheduler.config.k8s.io/v1) from a YAML file: the profiles with
// their plugins and plugin arguments, percentageOfNodesToScore, the client
// connection, leader election and the back-off. Fields skiff does not
// implement are rejected, not ignored. Each profile's plugins are merged
// with the default plugins as upstream merges them.
package config
