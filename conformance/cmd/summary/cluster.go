package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// nodeList is the part of `kubectl get nodes -o json` the summary shows.
type nodeList struct {
	Items []struct {
		Metadata struct {
			Name   string            `json:"name"`
			Labels map[string]string `json:"labels"`
		} `json:"metadata"`
		Status struct {
			Capacity map[string]string `json:"capacity"`
			NodeInfo struct {
				KubeletVersion          string `json:"kubeletVersion"`
				OSImage                 string `json:"osImage"`
				KernelVersion           string `json:"kernelVersion"`
				ContainerRuntimeVersion string `json:"containerRuntimeVersion"`
				Architecture            string `json:"architecture"`
			} `json:"nodeInfo"`
		} `json:"status"`
	} `json:"items"`
}

// versionInfo is `kubectl version -o json`.
type versionInfo struct {
	ServerVersion *struct {
		GitVersion string `json:"gitVersion"`
	} `json:"serverVersion"`
}

// clusterShape describes the cluster from the files run.sh saved; a
// missing file is said, not fatal.
func clusterShape(nodesFile, versionFile string) []string {
	var lines []string
	if b, err := os.ReadFile(versionFile); err == nil {
		var v versionInfo
		if json.Unmarshal(b, &v) == nil && v.ServerVersion != nil {
			lines = append(lines, fmt.Sprintf("API server: skiff-apiserver reporting %s", v.ServerVersion.GitVersion))
		}
	}
	b, err := os.ReadFile(nodesFile)
	if err != nil {
		return append(lines, "Nodes: unknown (no "+nodesFile+")")
	}
	var nl nodeList
	if err := json.Unmarshal(b, &nl); err != nil {
		return append(lines, fmt.Sprintf("Nodes: unknown (%s: %v)", nodesFile, err))
	}
	lines = append(lines, fmt.Sprintf("Nodes: %d", len(nl.Items)))
	for _, n := range nl.Items {
		info := n.Status.NodeInfo
		role := "worker"
		for l := range n.Metadata.Labels {
			if r, ok := strings.CutPrefix(l, "node-role.kubernetes.io/"); ok && r != "" {
				role = r
			}
		}
		lines = append(lines, fmt.Sprintf("`%s` (%s): %s CPU, %s memory, %s pods; kubelet %s, %s, %s, kernel %s, %s",
			n.Metadata.Name, role, orUnknown(n.Status.Capacity["cpu"]), orUnknown(n.Status.Capacity["memory"]),
			orUnknown(n.Status.Capacity["pods"]), orUnknown(info.KubeletVersion), orUnknown(info.OSImage),
			orUnknown(info.Architecture), orUnknown(info.KernelVersion), orUnknown(info.ContainerRuntimeVersion)))
	}
	return lines
}

func orUnknown(s string) string {
	if s == "" {
		return "?"
	}
	return s
}
