package iptables

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	goiptables "github.com/coreos/go-iptables/iptables"
)

// Kernel is what the proxier needs from iptables: one restore
// transaction, the chains a table has, and the jumps from the built-in
// chains.
type Kernel interface {
	// Restore runs iptables-restore --noflush with data.
	Restore(ctx context.Context, data []byte) error
	// Save returns iptables-save's output for a table.
	Save(ctx context.Context, table string) ([]byte, error)
	// EnsureJumps makes each jump exist, creating its target chain and
	// inserting it first in its chain when missing.
	EnsureJumps(jumps []Jump) error
	// DeleteJumps removes the jumps that exist.
	DeleteJumps(jumps []Jump) error
}

// Jump is a rule in a built-in chain that sends traffic to one of the
// proxy's chains.
type Jump struct {
	Table, From, To, Comment string
	// Extra are matches before the comment (e.g. conntrack state).
	Extra []string
}

// Rule is the jump's rule specification.
func (j Jump) Rule() []string {
	return cat(j.Extra, []string{"-m", "comment", "--comment", j.Comment, "-j", j.To})
}

// Jumps are the jumps the proxy installs, as upstream's
// iptablesJumpChains (with its own comments).
func Jumps(localhostNodePorts bool) []Jump {
	newConn := []string{"-m", "conntrack", "--ctstate", "NEW"}
	j := []Jump{
		{Table: TableFilter, From: "INPUT", To: ChainExternalServices, Comment: "skiff externally-visible service portals", Extra: newConn},
		{Table: TableFilter, From: "FORWARD", To: ChainExternalServices, Comment: "skiff externally-visible service portals", Extra: newConn},
		{Table: TableFilter, From: "INPUT", To: ChainNodePorts, Comment: "skiff health check service ports"},
		{Table: TableFilter, From: "FORWARD", To: ChainServices, Comment: "skiff service portals", Extra: newConn},
		{Table: TableFilter, From: "OUTPUT", To: ChainServices, Comment: "skiff service portals", Extra: newConn},
		{Table: TableFilter, From: "FORWARD", To: ChainForward, Comment: "skiff forwarding rules"},
		{Table: TableFilter, From: "INPUT", To: ChainProxyFirewall, Comment: "skiff load balancer firewall", Extra: newConn},
		{Table: TableFilter, From: "OUTPUT", To: ChainProxyFirewall, Comment: "skiff load balancer firewall", Extra: newConn},
		{Table: TableFilter, From: "FORWARD", To: ChainProxyFirewall, Comment: "skiff load balancer firewall", Extra: newConn},
		{Table: TableNAT, From: "OUTPUT", To: ChainServices, Comment: "skiff service portals"},
		{Table: TableNAT, From: "PREROUTING", To: ChainServices, Comment: "skiff service portals"},
		{Table: TableNAT, From: "POSTROUTING", To: ChainPostrouting, Comment: "skiff postrouting rules"},
	}
	if localhostNodePorts {
		j = append(j,
			Jump{Table: TableFilter, From: "INPUT", To: ChainFirewall, Comment: "skiff localnet firewall"},
			Jump{Table: TableFilter, From: "OUTPUT", To: ChainFirewall, Comment: "skiff localnet firewall"})
	}
	return j
}

// ExecKernel runs the iptables binaries of the network namespace the
// process is in.
type ExecKernel struct {
	ipt *goiptables.IPTables
}

// NewExecKernel finds iptables (IPv4).
func NewExecKernel() (*ExecKernel, error) {
	ipt, err := goiptables.NewWithProtocol(goiptables.ProtocolIPv4)
	if err != nil {
		return nil, fmt.Errorf("iptables: %w", err)
	}
	return &ExecKernel{ipt: ipt}, nil
}

// IPTables is the go-iptables handle (for the egress guard).
func (k *ExecKernel) IPTables() *goiptables.IPTables { return k.ipt }

// Restore runs one iptables-restore --noflush transaction.
func (k *ExecKernel) Restore(ctx context.Context, data []byte) error {
	cmd := exec.CommandContext(ctx, "iptables-restore", "-w", "5", "--noflush")
	cmd.Stdin = bytes.NewReader(data)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("iptables-restore: %w: %s%s", err, strings.TrimSpace(string(out)), failedLine(out, data))
	}
	return nil
}

// failedLine quotes the input line iptables-restore names in its error
// ("line N failed").
func failedLine(out, data []byte) string {
	var n int
	i := bytes.Index(out, []byte("line "))
	if i < 0 {
		return ""
	}
	if _, err := fmt.Sscanf(string(out[i:]), "line %d", &n); err != nil || n < 1 {
		return ""
	}
	lines := bytes.Split(data, []byte("\n"))
	if n > len(lines) {
		return ""
	}
	return fmt.Sprintf(" (line %d: %s)", n, lines[n-1])
}

// Save runs iptables-save -t table.
func (k *ExecKernel) Save(ctx context.Context, table string) ([]byte, error) {
	out, err := exec.CommandContext(ctx, "iptables-save", "-t", table).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("iptables-save -t %s: %w: %s", table, err, ee.Stderr)
		}
		return nil, fmt.Errorf("iptables-save -t %s: %w", table, err)
	}
	return out, nil
}

// ParseChains returns the chains declared (":NAME policy [p:b]") in
// iptables-save output.
func ParseChains(save []byte) map[string]bool {
	chains := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(save))
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) < 2 || line[0] != ':' {
			continue
		}
		if i := bytes.IndexByte(line, ' '); i > 1 {
			chains[string(line[1:i])] = true
		}
	}
	return chains
}

// MissingJumps returns the jumps of table that its iptables-save output
// lacks (so that a sync that finds them all forks no iptables command).
func MissingJumps(jumps []Jump, table string, save []byte) []Jump {
	var missing []Jump
	lines := bytes.Split(save, []byte("\n"))
	for _, j := range jumps {
		if j.Table != table {
			continue
		}
		prefix, comment, suffix := []byte("-A "+j.From+" "), []byte(`--comment "`+j.Comment+`"`), []byte(" -j "+j.To)
		found := false
		for _, l := range lines {
			if bytes.HasPrefix(l, prefix) && bytes.HasSuffix(l, suffix) && bytes.Contains(l, comment) {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, j)
		}
	}
	return missing
}

// EnsureJumps inserts each missing jump at the top of its chain, after
// making sure the target chain exists.
func (k *ExecKernel) EnsureJumps(jumps []Jump) error {
	var errs []error
	for _, j := range jumps {
		ok, err := k.ipt.ChainExists(j.Table, j.To)
		if err == nil && !ok {
			err = k.ipt.NewChain(j.Table, j.To)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("chain %s/%s: %w", j.Table, j.To, err))
			continue
		}
		ok, err = k.ipt.Exists(j.Table, j.From, j.Rule()...)
		if err == nil && !ok {
			err = k.ipt.Insert(j.Table, j.From, 1, j.Rule()...)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("jump %s/%s -> %s: %w", j.Table, j.From, j.To, err))
		}
	}
	return errors.Join(errs...)
}

// DeleteJumps removes the jumps that exist.
func (k *ExecKernel) DeleteJumps(jumps []Jump) error {
	var errs []error
	for _, j := range jumps {
		ok, err := k.ipt.ChainExists(j.Table, j.To)
		if err != nil || !ok {
			continue
		}
		if err := k.ipt.DeleteIfExists(j.Table, j.From, j.Rule()...); err != nil {
			errs = append(errs, fmt.Errorf("jump %s/%s -> %s: %w", j.Table, j.From, j.To, err))
		}
	}
	return errors.Join(errs...)
}
