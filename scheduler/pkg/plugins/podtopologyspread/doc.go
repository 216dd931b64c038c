// Package podtopologyspread is upstream's PodTopologySpread plugin: hard
// constraints (whenUnsatisfiable: DoNotSchedule) as a filter and soft ones
// (ScheduleAnyway) as a score, with minDomains, matchLabelKeys and the node
// inclusion policies. Pods without constraints get the profile's default
// constraints (upstream's system defaults unless configured) with a selector
// built from the Services, ReplicaSets, StatefulSets and
// ReplicationControllers that own or select them. PreFilter and PreScore
// count the matching pods per topology domain once a cycle.
package podtopologyspread
