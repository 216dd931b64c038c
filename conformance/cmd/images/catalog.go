package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// sources are where the images' content comes from on this machine.
type sources struct {
	// Bin holds agnhost, nnp, sample-apiserver and etcd (built by
	// build.sh from upstream's Go packages) and pause (cmd/pause).
	Bin string
	// KubeSrc is k8s.io/kubernetes in the module cache: the images' data
	// files (porter's certificate, kitten's and nautilus' pages).
	KubeSrc string
	// Busybox is a static busybox whose ash passes on environment
	// variables whose names are not shell identifiers ("data-1", as
	// envFrom makes them), as upstream's busybox 1.36 image does:
	// busybox.sh builds Debian's with that option on.
	Busybox string
	// Dig, Curl and Netcat are Debian's (bind9-dnsutils, curl,
	// netcat-openbsd as upstream's agnhost image has it: the Services tests
	// run "nc -v -t -w 2", which busybox's nc does not take), copied with
	// their shared libraries; empty leaves them out.
	Dig, Curl, Netcat string
	// Getent is Debian's (libc-bin), copied with its libraries into the
	// agnhost and jessie-dnsutils images; empty leaves it out.
	Getent string
}

// image is one image under upstream's path in the registry.
type image struct {
	Repo, Tag string
	// From says what it is built from, for -list and the docs.
	From   string
	Layers []*layer
	Config runConfig
}

// Ref is repo:tag.
func (i image) Ref() string { return i.Repo + ":" + i.Tag }

const passwd = `root:x:0:0:root:/root:/bin/sh
daemon:x:1:1:daemon:/usr/sbin:/bin/false
bin:x:2:2:bin:/bin:/bin/false
sys:x:3:3:sys:/dev:/bin/false
www-data:x:33:33:www-data:/var/www:/bin/false
nobody:x:65534:65534:nobody:/home:/bin/false
`

const group = `root:x:0:
daemon:x:1:
bin:x:2:
sys:x:3:
www-data:x:33:
nogroup:x:65534:
`

// busyboxApplets lists the applets of a busybox binary.
func busyboxApplets(bb string) ([]string, error) {
	out, err := exec.Command(bb, "--list").Output()
	if err != nil {
		return nil, fmt.Errorf("%s --list: %w", bb, err)
	}
	var applets []string
	for _, a := range strings.Fields(string(out)) {
		if a != "busybox" && !strings.Contains(a, "/") {
			applets = append(applets, a)
		}
	}
	return applets, nil
}

// catalog builds the layers and lists the images of the conformance tests
// (test/utils/image/manifest.go of upstream's release) that can be made
// here. On an error in a host file it still returns the list.
func catalog(src sources) ([]image, error) {
	applets, err := busyboxApplets(src.Busybox)
	if err != nil {
		return nil, err
	}
	// busybox: every applet linked in /bin, ash as /bin/sh.
	base := newLayer().
		HostFile("bin/busybox", src.Busybox, 0o755).
		File("etc/passwd", []byte(passwd), 0o644).
		File("etc/group", []byte(group), 0o644).
		File("etc/nsswitch.conf", []byte("passwd: files\ngroup: files\nhosts: files dns\n"), 0o644).
		Dir("tmp", 0o1777).Dir("root", 0o700).Dir("home", 0o755).Dir("var/www", 0o755).
		Dir("usr/bin", 0o755).Dir("usr/sbin", 0o755).Dir("usr/local/bin", 0o755)
	for _, a := range applets {
		base.Symlink("bin/"+a, "busybox")
	}

	// agnhost: upstream's Dockerfile on busybox instead of alpine; the
	// tools its tests call (dig, curl) from Debian.
	agnhost := newLayer().
		HostFile("agnhost", filepath.Join(src.Bin, "agnhost"), 0o755).
		Symlink("agnhost-2", "agnhost").
		Dir("uploads", 0o755).
		HostFile("localhost.crt", filepath.Join(src.KubeSrc, "test/images/agnhost/porter/localhost.crt"), 0o644).
		HostFile("localhost.key", filepath.Join(src.KubeSrc, "test/images/agnhost/porter/localhost.key"), 0o644).
		// The user and group of upstream's image (SupplementalGroups tests).
		File("etc/passwd", []byte(passwd+"user-defined-in-image:x:1000:1000::/home/user-defined-in-image:/bin/sh\n"), 0o644).
		File("etc/group", []byte(group+"user-defined-in-image:x:1000:\ngroup-defined-in-image:x:50000:user-defined-in-image\n"), 0o644).
		Dir("home/user-defined-in-image", 0o755)
	dns := newLayer()
	for _, l := range []*layer{agnhost, dns} {
		if src.Dig != "" {
			l.HostBinary("usr/bin/dig", src.Dig)
		}
		// The DNS tests' probes check /etc/hosts with getent, which
		// busybox lacks (upstream's alpine and Debian images have it).
		if src.Getent != "" {
			l.HostBinary("usr/bin/getent", src.Getent)
		}
	}
	if src.Curl != "" {
		agnhost.HostBinary("usr/bin/curl", src.Curl)
	}
	if src.Netcat != "" {
		agnhost.HostBinary("usr/bin/nc", src.Netcat)
	}
	agnhostConfig := runConfig{
		Env:          []string{defaultPath},
		Entrypoint:   []string{"/agnhost"},
		Cmd:          []string{"pause"},
		ExposedPorts: ports(80, 8080, 8081, 9376, 5000),
	}
	webPage := func(name string) *layer {
		dir := filepath.Join(src.KubeSrc, "test/images", name, "html")
		return newLayer().
			HostFile(name+".jpg", filepath.Join(dir, name+".jpg"), 0o644).
			HostFile("data.json", filepath.Join(dir, "data.json"), 0o644)
	}
	withCmd := func(c runConfig, cmd ...string) runConfig {
		c.Cmd = cmd
		return c
	}

	pause := newLayer().HostFile("pause", filepath.Join(src.Bin, "pause"), 0o755)

	// httpd and nginx: busybox's httpd serving the page of upstream's image
	// on port 80, under the command names of upstream's images.
	httpd := newLayer().
		File("usr/local/apache2/htdocs/index.html", []byte("<html><body><h1>It works!</h1></body></html>\n"), 0o644).
		File("usr/local/bin/httpd-foreground", []byte("#!/bin/sh\n# busybox httpd in the foreground, in place of Apache's.\nexec /bin/httpd -f -v -p 80 -h /usr/local/apache2/htdocs\n"), 0o755)
	nginx := newLayer().
		File("usr/share/nginx/html/index.html", []byte("<!DOCTYPE html>\n<html>\n<head>\n<title>Welcome to nginx!</title>\n</head>\n<body>\n<h1>Welcome to nginx!</h1>\n</body>\n</html>\n"), 0o644).
		File("usr/sbin/nginx", []byte("#!/bin/sh\n# busybox httpd in the foreground, in place of nginx (its arguments are ignored).\nexec /bin/httpd -f -v -p 80 -h /usr/share/nginx/html\n"), 0o755)

	nnp := newLayer().HostFile("usr/local/bin/nnp", filepath.Join(src.Bin, "nnp"), 0o4755)

	// The Aggregator test's pod: k8s.io/sample-apiserver (upstream's
	// test/images/sample-apiserver puts it at /sample-apiserver) beside the
	// etcd server, which the test runs as /usr/local/bin/etcd.
	sampleAPIServer := newLayer().HostFile("sample-apiserver", filepath.Join(src.Bin, "sample-apiserver"), 0o755)
	etcd := newLayer().HostFile("usr/local/bin/etcd", filepath.Join(src.Bin, "etcd"), 0o755).Dir("var/etcd", 0o700)

	shell := runConfig{Env: []string{defaultPath}, Cmd: []string{"sh"}}
	httpdConfig := runConfig{Env: []string{defaultPath}, Cmd: []string{"httpd-foreground"}, WorkingDir: "/usr/local/apache2", ExposedPorts: ports(80)}
	nginxConfig := runConfig{Env: []string{defaultPath}, Cmd: []string{"nginx", "-g", "daemon off;"}, ExposedPorts: ports(80)}
	nonroot := shell
	nonroot.User = "1234"

	imgs := []image{
		{Repo: "e2e-test-images/busybox", Tag: "1.36.1-1", From: "Debian's busybox 1.35, built by busybox.sh (ash passes on every variable)", Layers: []*layer{base}, Config: shell},
		{Repo: "e2e-test-images/agnhost", Tag: "2.53", From: "k8s.io/kubernetes/test/images/agnhost on busybox, dig, curl and netcat-openbsd from Debian", Layers: []*layer{base, agnhost}, Config: agnhostConfig},
		{Repo: "e2e-test-images/kitten", Tag: "1.7", From: "agnhost test-webserver with upstream's kitten page", Layers: []*layer{base, agnhost, webPage("kitten")}, Config: withCmd(agnhostConfig, "test-webserver")},
		{Repo: "e2e-test-images/nautilus", Tag: "1.7", From: "agnhost test-webserver with upstream's nautilus page", Layers: []*layer{base, agnhost, webPage("nautilus")}, Config: withCmd(agnhostConfig, "test-webserver")},
		{Repo: "pause", Tag: "3.10", From: "conformance/cmd/pause", Layers: []*layer{pause}, Config: runConfig{Env: []string{defaultPath}, Entrypoint: []string{"/pause"}, User: "65535:65535"}},
		{Repo: "e2e-test-images/httpd", Tag: "2.4.38-4", From: "busybox httpd in place of Apache httpd", Layers: []*layer{base, httpd}, Config: httpdConfig},
		{Repo: "e2e-test-images/httpd", Tag: "2.4.39-4", From: "busybox httpd in place of Apache httpd", Layers: []*layer{base, httpd}, Config: httpdConfig},
		{Repo: "e2e-test-images/nginx", Tag: "1.14-4", From: "busybox httpd in place of nginx", Layers: []*layer{base, nginx}, Config: nginxConfig},
		{Repo: "e2e-test-images/nginx", Tag: "1.15-4", From: "busybox httpd in place of nginx", Layers: []*layer{base, nginx}, Config: nginxConfig},
		{Repo: "e2e-test-images/jessie-dnsutils", Tag: "1.7", From: "busybox with Debian's dig", Layers: []*layer{base, dns}, Config: shell},
		{Repo: "e2e-test-images/nonewprivs", Tag: "1.3", From: "k8s.io/kubernetes/test/images/nonewprivs (setuid) on busybox", Layers: []*layer{base, nnp}, Config: withCmd(shell, "nnp")},
		{Repo: "e2e-test-images/nonroot", Tag: "1.4", From: "busybox run as user 1234", Layers: []*layer{base}, Config: nonroot},
		{Repo: "e2e-test-images/sample-apiserver", Tag: "1.29.2", From: "k8s.io/sample-apiserver (the release's staging tag) on busybox", Layers: []*layer{base, sampleAPIServer},
			Config: runConfig{Env: []string{defaultPath}, Entrypoint: []string{"/sample-apiserver"}}},
		{Repo: "etcd", Tag: "3.5.16-0", From: "go.etcd.io/etcd/server/v3 (the version kubernetes requires) on busybox", Layers: []*layer{base, etcd},
			Config: runConfig{Env: []string{defaultPath}, Cmd: []string{"/usr/local/bin/etcd"}}},
	}
	for _, img := range imgs {
		for _, l := range img.Layers {
			if err := l.Err(); err != nil {
				return imgs, fmt.Errorf("%s: %w", img.Ref(), err)
			}
		}
	}
	return imgs, nil
}

func ports(ps ...int) map[string]struct{} {
	m := map[string]struct{}{}
	for _, p := range ps {
		m[fmt.Sprintf("%d/tcp", p)] = struct{}{}
	}
	return m
}
