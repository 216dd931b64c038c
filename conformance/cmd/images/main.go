// Command images builds the images upstream's conformance tests pull, as
// OCI image layouts, and pushes them with skopeo into a registry on
// loopback under upstream's paths (e2e-test-images/agnhost:2.53,
// pause:3.10, ...), so that a KUBE_TEST_REPO_LIST pointing registry.k8s.io
// and its kin at that registry serves every pull of the suite.
//
//	images -bin conformance/_output/bin -kube-src $(go env GOMODCACHE)/k8s.io/kubernetes@v1.32.4 \
//	    -out conformance/_output/images -registry 127.0.0.1:5055
package main

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "images:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("images", flag.ContinueOnError)
	var src sources
	fs.StringVar(&src.Bin, "bin", "", "directory with agnhost, nnp, sample-apiserver, etcd and pause")
	fs.StringVar(&src.KubeSrc, "kube-src", "", "k8s.io/kubernetes module directory (data files of the images)")
	fs.StringVar(&src.Busybox, "busybox", "", "static busybox whose ash passes on badly-named variables (busybox.sh builds it)")
	fs.StringVar(&src.Dig, "dig", lookPath("dig"), "dig (Debian bind9-dnsutils), copied with its libraries; empty: none")
	fs.StringVar(&src.Curl, "curl", lookPath("curl"), "curl, copied with its libraries; empty: none")
	fs.StringVar(&src.Getent, "getent", lookPath("getent"), "getent (Debian libc-bin), copied with its libraries; empty: none (the DNS tests' /etc/hosts probes fail)")
	fs.StringVar(&src.Netcat, "netcat", lookPath("nc.openbsd"), "OpenBSD's nc (Debian netcat-openbsd), copied with its libraries as /usr/bin/nc; empty: busybox's nc")
	out := fs.String("out", "", "directory for the OCI layouts")
	registry := fs.String("registry", "", "host:port of the registry on loopback to push to")
	force := fs.Bool("force", false, "push even the images the registry already has with the same digest")
	list := fs.Bool("list", false, "list the images and what they are built from, and exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *list {
		src.Bin, src.KubeSrc = os.DevNull, os.DevNull
		if src.Busybox == "" {
			// The applets are the same in Debian's busybox-static.
			src.Busybox = "/bin/busybox"
		}
	}
	if !*list && (src.Bin == "" || src.KubeSrc == "" || src.Busybox == "" || *out == "" || *registry == "") {
		return fmt.Errorf("-bin, -kube-src, -busybox, -out and -registry are required")
	}
	imgs, err := catalog(src)
	if err != nil && !*list {
		return err
	}
	if *list {
		for _, img := range imgs {
			fmt.Printf("%s\t%s\n", img.Ref(), img.From)
		}
		return nil
	}
	if !strings.HasPrefix(*registry, "127.") && !strings.HasPrefix(*registry, "localhost:") && !strings.HasPrefix(*registry, "[::1]:") {
		return fmt.Errorf("registry %q is not on loopback", *registry)
	}
	if src.Dig == "" {
		fmt.Fprintln(os.Stderr, "images: no dig on this machine (Debian bind9-dnsutils): the DNS tests' probes will fail")
	}
	if src.Netcat == "" {
		fmt.Fprintln(os.Stderr, "images: no nc.openbsd on this machine (Debian netcat-openbsd): the Services tests' nc -v -t will fail")
	}
	for _, img := range imgs {
		start := time.Now()
		dir := filepath.Join(*out, strings.ReplaceAll(img.Repo, "/", "_")+"_"+img.Tag)
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
		digest, err := writeLayout(dir, img.Tag, img.Layers, img.Config)
		if err != nil {
			return fmt.Errorf("%s: %w", img.Ref(), err)
		}
		if !*force && registryDigest(*registry, img) == digest {
			fmt.Printf("images: %s/%s already in the registry (%s)\n", *registry, img.Ref(), digest)
			continue
		}
		dest := "docker://" + *registry + "/" + img.Ref()
		cmd := exec.Command("skopeo", "copy", "--quiet", "--dest-tls-verify=false", "oci:"+dir+":"+img.Tag, dest)
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("skopeo copy %s: %v: %s", dest, err, b)
		}
		if got := registryDigest(*registry, img); got != digest {
			return fmt.Errorf("%s: the registry has %q after the push, not %s", img.Ref(), got, digest)
		}
		fmt.Printf("images: pushed %s/%s (%s) in %s\n", *registry, img.Ref(), img.From, time.Since(start).Round(time.Millisecond))
	}
	return nil
}

func lookPath(name string) string {
	p, err := exec.LookPath(name)
	if err != nil {
		return ""
	}
	return p
}

// registryDigest is the digest of the image's manifest in the registry,
// empty when the registry does not have it.
func registryDigest(registry string, img image) string {
	req, err := http.NewRequest(http.MethodHead, "http://"+registry+"/v2/"+img.Repo+"/manifests/"+img.Tag, nil)
	if err != nil {
		return ""
	}
	req.Header.Set("Accept", mediaTypeManifest)
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return ""
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return ""
	}
	return resp.Header.Get("Docker-Content-Digest")
}
