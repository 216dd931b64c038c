package nodestatus

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// MaxPods is upstream's default pod capacity.
const MaxPods = 110

// Machine is what the node reports about the host.
type Machine struct {
	CPUs             int
	MemoryBytes      int64
	EphemeralStorage int64
	MachineID        string
	SystemUUID       string
	BootID           string
	KernelVersion    string
	OSImage          string
}

// ReadMachine reads the host's facts; storage is measured on rootDir.
func ReadMachine(rootDir string) (Machine, error) {
	m := Machine{CPUs: runtime.NumCPU()}
	var err error
	if m.MemoryBytes, err = memTotal("/proc/meminfo"); err != nil {
		return m, err
	}
	var st unix.Statfs_t
	if err := unix.Statfs(rootDir, &st); err != nil {
		return m, fmt.Errorf("statfs %s: %w", rootDir, err)
	}
	m.EphemeralStorage = int64(st.Blocks) * st.Bsize
	m.MachineID = readTrim("/etc/machine-id")
	m.SystemUUID = readTrim("/sys/class/dmi/id/product_uuid")
	m.BootID = readTrim("/proc/sys/kernel/random/boot_id")
	var uts unix.Utsname
	if err := unix.Uname(&uts); err == nil {
		m.KernelVersion = string(bytes.TrimRight(uts.Release[:], "\x00"))
	}
	m.OSImage = osImage("/etc/os-release")
	return m, nil
}

func readTrim(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func memTotal(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("parsing MemTotal: %w", err)
			}
			return kb * 1024, nil
		}
	}
	return 0, errors.New("no MemTotal in " + path)
}

func osImage(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "Linux"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
			return strings.Trim(v, `"`)
		}
	}
	return "Linux"
}

// Capacity is the node's capacity; allocatable is the same (no
// reservations yet).
func (m Machine) Capacity() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewQuantity(int64(m.CPUs), resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(m.MemoryBytes, resource.BinarySI),
		corev1.ResourceEphemeralStorage: *resource.NewQuantity(m.EphemeralStorage, resource.BinarySI),
		corev1.ResourcePods:             *resource.NewQuantity(MaxPods, resource.DecimalSI),
	}
}

// DefaultNodeIP is the first global unicast IPv4 address of an interface
// that is up, for when --node-ip is not given.
func DefaultNodeIP() (string, error) {
	ifaces, err := net.Interfaces()
	if err != nil {
		return "", err
	}
	for _, ifc := range ifaces {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, err := ifc.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			if ok && ipn.IP.To4() != nil && ipn.IP.IsGlobalUnicast() {
				return ipn.IP.String(), nil
			}
		}
	}
	return "", errors.New("no usable IPv4 address found; set --node-ip")
}
