package localsqstest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// BinaryEnv are the environment variables that name the binary; the first one set wins.
var BinaryEnv = []string{"LOCALSQS_BIN", "LOCALSQS_BINARY"}

// ErrBinaryNotFound is wrapped by [FindBinary]'s errors.
var ErrBinaryNotFound = errors.New("localsqs binary not found")

func exeName() string {
	if runtime.GOOS == "windows" {
		return "localsqs.exe"
	}
	return "localsqs"
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && (runtime.GOOS == "windows" || fi.Mode().Perm()&0o111 != 0)
}

// RepositoryBinary is target/release/localsqs of the repository this package's source sits in
// (go/localsqstest/ → ../..), or "" when the source path is unknown (a -trimpath build).
func RepositoryBinary() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return ""
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "target", "release", exeName())
}

// FindBinary returns the localsqs executable to run: binary if not empty (a path, or a name
// looked up on PATH), else $LOCALSQS_BIN (or $LOCALSQS_BINARY), else localsqs on PATH, else
// [RepositoryBinary]. A binary named explicitly or by the environment that is not executable
// is an error, not a reason to look further.
func FindBinary(binary string) (string, error) {
	source := "WithBinary"
	if binary == "" {
		for _, name := range BinaryEnv {
			if v := os.Getenv(name); v != "" {
				binary, source = v, "$"+name
				break
			}
		}
	}
	if binary != "" {
		if !strings.ContainsRune(binary, os.PathSeparator) && !filepath.IsAbs(binary) {
			if found, err := exec.LookPath(binary); err == nil {
				return filepath.Abs(found)
			}
		}
		if isExecutable(binary) {
			return filepath.Abs(binary)
		}
		return "", fmt.Errorf("%w: the binary given by %s is not an executable file: %q", ErrBinaryNotFound, source, binary)
	}
	if found, err := exec.LookPath(exeName()); err == nil {
		return filepath.Abs(found)
	}
	repo := RepositoryBinary()
	if repo != "" && isExecutable(repo) {
		return filepath.Clean(repo), nil
	}
	return "", fmt.Errorf("%w (tried $LOCALSQS_BIN, PATH, %s): put it on PATH, set LOCALSQS_BIN to its path, "+
		"use WithBinary, or build it in the repository with `cargo build --release`", ErrBinaryNotFound,
		firstOf(repo, "the repository's target/release"))
}
