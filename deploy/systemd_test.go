package deploy_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// unit is a systemd unit file: section → key → values (keys may repeat).
type unit map[string]map[string][]string

// parseUnit reads a unit file, joining lines continued with a backslash.
func parseUnit(t *testing.T, path string) unit {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	u := unit{}
	section, pending := "", ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if pending != "" {
			line, pending = pending+" "+line, ""
		}
		if strings.HasSuffix(line, `\`) {
			pending = strings.TrimSuffix(line, `\`)
			continue
		}
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = strings.Trim(line, "[]")
			u[section] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("%s:%d: %q is not KEY=VALUE in a section", path, n, line)
			}
			u[section][strings.TrimSpace(k)] = append(u[section][strings.TrimSpace(k)], strings.TrimSpace(v))
		}
	}
	return u
}

// hardening is what every unit must set, and to what.
var hardening = map[string]string{
	"DynamicUser": "yes", "NoNewPrivileges": "yes", "ProtectSystem": "strict", "ProtectHome": "yes",
	"PrivateTmp": "yes", "ProtectKernelTunables": "yes", "ProtectKernelModules": "yes", "ProtectControlGroups": "yes",
	"RestrictSUIDSGID": "yes", "LockPersonality": "yes", "MemoryDenyWriteExecute": "yes", "RestrictRealtime": "yes",
	"SystemCallArchitectures": "native", "CapabilityBoundingSet": "", "UMask": "0077",
}

var exposure = regexp.MustCompile(`Overall exposure level for \S+: ([0-9.]+)`)

func TestSystemdUnits(t *testing.T) {
	forecaster, collector := buildBinaries(t)
	bins := map[string]string{"prewarm-forecaster": forecaster, "prewarm-collector": collector}
	dir := t.TempDir()
	for name, bin := range bins {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("systemd", name+".service")
			u := parseUnit(t, path)
			svc := u["Service"]
			for k, want := range hardening {
				if got := svc[k]; len(got) != 1 || got[0] != want {
					t.Errorf("%s: %s=%v, want %q", path, k, got, want)
				}
			}
			if len(u["Install"]["WantedBy"]) == 0 || len(svc["StateDirectory"]) == 0 {
				t.Errorf("%s: want [Install] WantedBy= and a StateDirectory=", path)
			}
			cmdline := strings.Fields(svc["ExecStart"][0])
			if cmdline[0] != "/usr/local/bin/"+name {
				t.Errorf("%s: ExecStart runs %s, want /usr/local/bin/%s", path, cmdline[0], name)
			}
			// Every flag exists in the binary's --help, every address is loopback.
			args := cmdline[1:]
			helpArgs := []string{}
			if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
				helpArgs = []string{args[0]} // the subcommand
			}
			help := helpText(t, bin, helpArgs...)
			for _, f := range flagsIn(args) {
				if !strings.Contains(help, "--"+f+" ") && !strings.Contains(help, "--"+f+"[=") {
					t.Errorf("%s: %s has no flag --%s", path, name, f)
				}
			}
			for i, a := range args {
				if (a == "--listen" || a == "--keda-listen") && i+1 < len(args) {
					checkListen(t, path, args[i+1])
				}
			}

			// systemd-analyze verify, with ExecStart pointing at the binary
			// just built (verify checks that it exists and is executable).
			text, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			copyPath := filepath.Join(dir, name+".service")
			if err := os.WriteFile(copyPath, []byte(strings.ReplaceAll(string(text), "/usr/local/bin/"+name, bin)), 0o644); err != nil {
				t.Fatal(err)
			}
			analyze, err := exec.LookPath("systemd-analyze")
			if err != nil {
				t.Skip("systemd-analyze is not installed: checked the directives and flags only")
			}
			if out, err := exec.Command(analyze, "verify", "--man=no", copyPath).CombinedOutput(); err != nil || len(out) > 0 {
				t.Errorf("systemd-analyze verify %s: %v\n%s", path, err, out)
			}
			out, err := exec.Command(analyze, "security", "--offline=true", "--no-pager", copyPath).CombinedOutput()
			m := exposure.FindSubmatch(out)
			if m == nil {
				t.Logf("systemd-analyze security --offline: %v (%s); not scored", err, lastLine(out))
				return
			}
			score, _ := strconv.ParseFloat(string(m[1]), 64)
			t.Logf("systemd-analyze security --offline %s: exposure %.1f (0 best, 10 worst)", path, score)
			if score > 2.0 {
				t.Errorf("%s: exposure %.1f, want at most 2.0", path, score)
			}
		})
	}
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}
