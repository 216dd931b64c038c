// Package deploytest checks the production deploy files under deploy/
// against the daemons they run: every systemd unit passes
// `systemd-analyze verify` with the binaries installed at the paths it
// names (deploy/install.sh into a temporary root), every flag a unit or a
// flags file sets exists with a value the daemon's flag accepts, and the
// units keep the properties docs/operations.md relies on. It needs the
// binaries of `make build` in bin/.
package deploytest
