module skiff.dev/controller-manager

go 1.24.0
