package main

import (
	"archive/tar"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// Several -ref: one index entry per name, in order, every entry the same manifest; the blobs are stored once.
func TestSeveralRefsShareOneManifest(t *testing.T) {
	dir := t.TempDir()
	layerPath := filepath.Join(dir, "layer.tar")
	lf, err := os.Create(layerPath)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(lf)
	body := []byte("#!/bin/true\n")
	if err := tw.WriteHeader(&tar.Header{Name: "bin", Mode: 0o755, Size: int64(len(body))}); err != nil {
		t.Fatal(err)
	}
	tw.Write(body)
	tw.Close()
	lf.Close()
	cfg := filepath.Join(dir, "config.json")
	os.WriteFile(cfg, []byte(`{"Entrypoint":["/bin"],"User":"65532:65532"}`), 0o644)
	out := filepath.Join(dir, "x.oci.tar")
	refs := []string{"registry.example/a/b:v1", "registry.example/a/b:v2"}
	if err := run(out, refs, cfg, "", 1, "amd64", []string{layerPath}, nil, nil); err != nil {
		t.Fatal(err)
	}

	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	var index struct {
		Manifests []descriptor `json:"manifests"`
	}
	names := map[string]int{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			names[h.Name]++
		}
		if h.Name == "index.json" {
			b, _ := io.ReadAll(tr)
			if err := json.Unmarshal(b, &index); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(index.Manifests) != 2 {
		t.Fatalf("index has %d entries, want 2", len(index.Manifests))
	}
	for i, m := range index.Manifests {
		if got := m.Annotations["io.containerd.image.name"]; got != refs[i] {
			t.Errorf("entry %d: io.containerd.image.name %q, want %q", i, got, refs[i])
		}
		if got := m.Annotations["org.opencontainers.image.ref.name"]; got != refs[i] {
			t.Errorf("entry %d: org.opencontainers.image.ref.name %q, want %q", i, got, refs[i])
		}
		if m.Digest != index.Manifests[0].Digest || m.Size != index.Manifests[0].Size {
			t.Errorf("entry %d: manifest %s differs from entry 0's %s", i, m.Digest, index.Manifests[0].Digest)
		}
	}
	// config, manifest, one layer: three blobs, each once.
	blobs := 0
	for n, c := range names {
		if filepath.Dir(n) == "blobs/sha256" {
			blobs++
			if c != 1 {
				t.Errorf("%s stored %d times", n, c)
			}
		}
	}
	if blobs != 3 {
		t.Errorf("%d blobs, want 3", blobs)
	}
	if names["blobs/sha256/"+index.Manifests[0].Digest[len("sha256:"):]] != 1 {
		t.Errorf("the manifest %s is not in the archive", index.Manifests[0].Digest)
	}
}
