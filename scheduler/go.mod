module skiff.dev/scheduler

go 1.24.0
