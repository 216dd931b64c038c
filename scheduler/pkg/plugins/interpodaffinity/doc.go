// Package interpodaffinity is upstream's InterPodAffinity plugin: required
// pod affinity and anti-affinity as a filter (including existing pods'
// anti-affinity against the incoming pod) and preferred terms as a score.
// PreFilter and PreScore count the matching pods per topology pair once a
// cycle, so Filter and Score are map lookups.
package interpodaffinity
