package files

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// folderTree is what one walk of a watched folder finds.
type folderTree struct {
	// files are the files to read, in path order.
	files []string
	// dirs are the directories walked, each of which must be watched.
	dirs []string
	// problems are the paths found but not usable (a directory that cannot
	// be listed, a symbolic link that cannot be followed), with the reason.
	problems map[string]string
}

// walkFolder lists the files under root by the rules of the package:
//
//   - a name starting with "." is skipped, file or directory, at any depth;
//     this hides the "..data" and "..<timestamp>" internals of a ConfigMap
//     mount, as well as editors' temporary files;
//   - a symbolic link to a file is read through, at any depth;
//   - a symbolic link to a directory is followed at the top level only,
//     which is where a ConfigMap mount puts them, so a walk cannot loop;
//   - anything else (sockets, devices, dangling links) is ignored.
//
// beforeList is called for every directory before it is listed, so that a
// watch set up there reports any file created after the listing. An error
// is returned only when root itself cannot be listed.
func walkFolder(root string, beforeList func(dir string)) (folderTree, error) {
	w := &walker{beforeList: beforeList, tree: folderTree{problems: map[string]string{}}}
	if err := w.walk(root, true); err != nil {
		return folderTree{}, err
	}
	slices.Sort(w.tree.files)
	return w.tree, nil
}

// walker carries one walk's state.
type walker struct {
	beforeList func(dir string)
	tree       folderTree
}

// walk lists dir and descends into its subdirectories. It returns the error
// of listing dir itself; problems below it are recorded in the tree.
func (w *walker) walk(dir string, top bool) error {
	w.beforeList(dir)
	w.tree.dirs = append(w.tree.dirs, dir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("listing %s: %w", dir, err)
	}
	for _, entry := range entries {
		if strings.HasPrefix(entry.Name(), ".") {
			continue
		}
		w.visit(filepath.Join(dir, entry.Name()), entry.Type(), top)
	}
	return nil
}

// visit handles one entry of a listed directory.
func (w *walker) visit(path string, mode fs.FileMode, top bool) {
	if mode&fs.ModeSymlink != 0 {
		target, err := os.Stat(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return // dangling, as a link briefly is while a ConfigMap is swapped
		case err != nil:
			w.tree.problems[path] = fmt.Sprintf("following link %s: %v", path, err)
			return
		case target.IsDir() && !top:
			return
		}
		mode = target.Mode().Type()
	}
	switch {
	case mode.IsDir():
		if err := w.walk(path, false); err != nil && !errors.Is(err, fs.ErrNotExist) {
			w.tree.problems[path] = err.Error()
		}
	case mode.IsRegular():
		w.tree.files = append(w.tree.files, path)
	}
}
