// Package files provides krt collections backed by files on disk, kept up
// to date with fsnotify: NewFileSingleton holds what one file says,
// NewFolderCollection holds every object that the files of a folder tree
// say. They are sources of a krt graph, like krt.NewStatic and
// krt.NewStaticCollection, which they are built on.
//
// # Model
//
// The caller gives a parse function from a file's content to objects; this
// package decides when to call it and what to do with the result. Each
// collection owns one fsnotify watcher and one goroutine. An event says
// only "something changed": after a quiet period (Options.Debounce, 100ms
// by default) the files are read again and compared with what was read
// before. A burst of writes is read once, after it ends, and a file is not
// read half-written; a stream of changes that never pauses is still read
// every ten quiet periods. Each file's content is remembered by digest, so
// parse runs only when a file's content differs from what it last parsed,
// and the collection announces only objects that changed (krt compares them
// with krt.Equal): rewriting a file with the same content, or touching it,
// produces no event.
//
// Both collections are synced when their constructor returns, the initial
// read being done, and stop when the stop channel passed to the constructor
// closes: the goroutine ends and the watcher is closed. The stop channel is
// also given to the collection, so krt.WithStop need not be passed; other
// krt options (name, metadata, debugging) apply as for any collection. The
// options of this package, the quiet period and the logger for problems,
// are an Options value given to the constructors named WithOptions.
//
// # Broken files
//
// Bad input never stops anything. A file that cannot be read, or that parse
// rejects (or panics on), keeps the objects of its last good content, and
// everything else keeps flowing. The problem is logged once, with the path
// and the error, when it appears, and is shown in the collection's debug
// errors (krt.WithDebugErrors, set by this package) under the file's path
// until the file is fixed or removed. A file of zero bytes is taken to be in
// the middle of being written (a truncate comes before the write): it keeps
// its objects, and a new empty file has none.
//
// # One file
//
// NewFileSingleton watches the directory that holds the file, not the file
// itself: replacing a file by renaming another over it (how editors and
// careful writers save), removing and creating it again, and a ConfigMap
// update all change which inode the path names, and a watch on the old
// inode would see none of it. A file that does not exist, at the start or
// later, means no value.
//
// # A folder
//
// NewFolderCollection watches a directory and every directory below it,
// including directories created later: a new directory is watched before it
// is listed, so a file written into it at once is not missed. Its rules:
//
//   - Files and directories whose name starts with "." are ignored, at any
//     depth: hidden files, editors' temporary files, and the internals of a
//     ConfigMap mount (below).
//   - A symbolic link to a file is read through, at any depth. A symbolic
//     link to a directory is followed at the top level only, which is where
//     a ConfigMap mount puts them; deeper ones are skipped, so a walk cannot
//     loop. A dangling link is no file, as it briefly is while a ConfigMap
//     is swapped.
//   - parse is called with the file's path (the folder's path joined with
//     the file's path below it) and its content, and returns the file's
//     objects; returning nil ignores the file.
//   - A removed file removes its objects; a removed directory, those of its
//     files.
//   - Keys are unique in a collection. When two files produce the same key,
//     the file that comes first in byte order of the paths wins, and the
//     other one gets a debug error naming both files; within one file, the
//     first object wins. When the winner stops producing the key, the other
//     file's object takes its place.
//   - If the folder itself goes away, so do all its objects, and the
//     problem is reported under the folder's path. A folder created again
//     under the same path is not noticed.
//
// # Rescan, not per-file updates
//
// Each debounced batch of events rescans the whole folder: it lists the
// tree, reads every file and parses those whose content changed. It does
// not act on the files the events name, because events do not reliably name
// what changed. A ConfigMap update produces events for "..data" only; files
// created in a new directory before its watch exists produce no event at
// all; a kernel queue overflow drops events outright; and the duplicate-key
// rule needs every file anyway, since removing the winning file uncovers
// another. A scan sees the folder as it is, whatever the events said. Its
// cost, reading every file of the folder once per batch, is small for the
// configuration folders this is for, and debouncing keeps batches rare;
// parsing, usually the expensive part, is done only for changed content.
//
// # ConfigMap mounts
//
// Kubernetes mounts a ConfigMap (or a Secret, or a projected volume) as a
// directory like this, and updates it by writing a new timestamped
// directory, pointing a new "..data_tmp" link at it, renaming that link over
// "..data" (an atomic swap of the whole content) and removing the old
// directory:
//
//	config/
//	  ..2024_05_01_10_00_00.123456789/   the current content
//	    mesh.yaml
//	  ..data -> ..2024_05_01_10_00_00.123456789
//	  mesh.yaml -> ..data/mesh.yaml
//
// A single-file watch of config/mesh.yaml sees the swap through the events
// of its directory and reads the new content through the links. A folder
// watch of config/ skips the dot-named entries and reads mesh.yaml through
// its top-level link, so each file is read once, under its visible name.
package files
