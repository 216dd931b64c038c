module skiff.dev/component-base

go 1.24.0
