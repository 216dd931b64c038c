module skiff.dev/proxy

go 1.24.0
