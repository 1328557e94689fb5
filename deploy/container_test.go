package deploy_test

import (
	"bufio"
	"debug/elf"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// stage is one FROM ... AS name of a Dockerfile, with its instructions.
type stage struct {
	from, name string
	lines      []string // instructions, continuation lines joined
}

func (s stage) instruction(word string) []string {
	var out []string
	for _, l := range s.lines {
		if w, rest, _ := strings.Cut(l, " "); strings.EqualFold(w, word) {
			out = append(out, rest)
		}
	}
	return out
}

func parseDockerfile(t *testing.T, path string) ([]stage, map[string]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var stages []stage
	args := map[string]string{} // ARGs before the first FROM
	sc := bufio.NewScanner(f)
	pending := ""
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = pending + line
		if strings.HasSuffix(line, `\`) {
			pending = strings.TrimSuffix(line, `\`) + " "
			continue
		}
		pending = ""
		word, rest, _ := strings.Cut(line, " ")
		switch strings.ToUpper(word) {
		case "FROM":
			f := strings.Fields(rest)
			f = slices.DeleteFunc(f, func(s string) bool { return strings.HasPrefix(s, "--platform=") })
			st := stage{from: f[0]}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				st.name = f[2]
			}
			stages = append(stages, st)
		case "ARG":
			if len(stages) == 0 {
				k, v, _ := strings.Cut(rest, "=")
				args[k] = v
				continue
			}
			fallthrough
		default:
			if len(stages) == 0 {
				t.Fatalf("%s: %q before the first FROM", path, line)
			}
			stages[len(stages)-1].lines = append(stages[len(stages)-1].lines, line)
		}
	}
	return stages, args
}

var goDirective = regexp.MustCompile(`(?m)^go (\d+\.\d+)`)

func TestDockerfile(t *testing.T) {
	path := filepath.Join("container", "Dockerfile")
	stages, args := parseDockerfile(t, path)
	byName := map[string]stage{}
	for _, s := range stages {
		byName[s.name] = s
	}
	gomod, err := os.ReadFile(filepath.Join("..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if m := goDirective.FindSubmatch(gomod); m == nil || args["GO_VERSION"] != string(m[1]) {
		t.Errorf("ARG GO_VERSION=%s, want go.mod's go %s", args["GO_VERSION"], m[1])
	}
	for _, tc := range []struct {
		image, base, cgo, cmd string
	}{
		// The forecaster is static: nothing but the binary is needed.
		{"forecaster", "gcr.io/distroless/static-debian12:nonroot", "CGO_ENABLED=0", "./cmd/forecaster"},
		// The collector links glibc for go-nvml's dlopen: distroless/base has it.
		{"collector", "gcr.io/distroless/base-debian12:nonroot", "CGO_ENABLED=1", "./cmd/collector"},
	} {
		t.Run(tc.image, func(t *testing.T) {
			final, ok := byName[tc.image]
			if !ok {
				t.Fatalf("no stage %q", tc.image)
			}
			if final.from != tc.base {
				t.Errorf("FROM %s, want %s", final.from, tc.base)
			}
			if u := final.instruction("USER"); len(u) != 1 || strings.HasPrefix(u[0], "0") || strings.HasPrefix(u[0], "root") {
				t.Errorf("USER %v: want a non-root user", u)
			}
			var entry []string
			if e := final.instruction("ENTRYPOINT"); len(e) != 1 || json.Unmarshal([]byte(e[0]), &entry) != nil || entry[0] != "/usr/local/bin/"+tc.image {
				t.Errorf("ENTRYPOINT %v: want the exec form running /usr/local/bin/%s", e, tc.image)
			}
			copies := final.instruction("COPY")
			if len(copies) != 1 || !strings.HasPrefix(copies[0], "--from=") {
				t.Fatalf("COPY %v: want the binary copied from a build stage", copies)
			}
			build, ok := byName[strings.Fields(strings.TrimPrefix(copies[0], "--from="))[0]]
			if !ok {
				t.Fatalf("COPY %s: no such stage", copies[0])
			}
			if !strings.HasPrefix(build.from, "golang:${GO_VERSION}-bookworm") {
				t.Errorf("build stage FROM %s: want golang:${GO_VERSION}-bookworm (Debian 12, as the distroless base)", build.from)
			}
			runs := strings.Join(build.instruction("RUN"), "\n")
			if !strings.Contains(runs, tc.cgo) || !strings.Contains(runs, "go build") || !strings.Contains(runs, tc.cmd) {
				t.Errorf("build stage RUN %q: want go build %s with %s", runs, tc.cmd, tc.cgo)
			}
			if _, err := os.Stat(filepath.Join("..", tc.cmd)); err != nil {
				t.Errorf("%s: %v", tc.cmd, err)
			}
		})
	}
	ignore, err := os.ReadFile(path + ".dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Fields(string(ignore)) {
		if slices.Contains([]string{"go.mod", "go.sum", "cmd", "*", "**"}, l) {
			t.Errorf("Dockerfile.dockerignore leaves %s out of the build context", l)
		}
	}
}

// TestBinaryLinking builds the binaries as the Dockerfile does and checks
// what each image must provide: nothing for the forecaster (no ELF
// interpreter, no shared library), only glibc for the collector, which
// must not link libnvidia-ml (it is dlopen'ed from the host driver).
func TestBinaryLinking(t *testing.T) {
	forecaster, collector := buildBinaries(t)
	for _, tc := range []struct {
		bin    string
		needed []string
		interp bool
	}{
		{forecaster, nil, false},
		{collector, []string{"libc.so.6"}, true},
	} {
		f, err := elf.Open(tc.bin)
		if err != nil {
			t.Fatal(err)
		}
		libs, _ := f.ImportedLibraries()
		interp := slices.ContainsFunc(f.Progs, func(p *elf.Prog) bool { return p.Type == elf.PT_INTERP })
		f.Close()
		name := filepath.Base(tc.bin)
		if interp != tc.interp || !slices.Equal(libs, tc.needed) {
			t.Errorf("%s: interpreter %v, needs %v; want interpreter %v, needs %v", name, interp, libs, tc.interp, tc.needed)
		}
		t.Logf("%s: dynamic loader %v, shared libraries %v", name, interp, libs)
	}
}
