module skiff.dev/kubelet

go 1.24.0
