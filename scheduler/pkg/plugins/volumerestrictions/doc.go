// Package volumerestrictions is upstream's VolumeRestrictions plugin, for
// the volumes skiff has: a pod whose claim is ReadWriteOncePod may not be
// scheduled while another pod uses that claim.
package volumerestrictions
