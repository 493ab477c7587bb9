/* SPDX-License-Identifier: MIT */
/*
 * tree.h - a call tree whose shape test_func knows, built with
 * -finstrument-functions (see the Makefile: tree.c leaves out
 * excluded_by_compiler by name, nt_file.c is left out by path, tree_lib.c
 * is a shared library).  Every function is noipa, so the compiler keeps
 * each call, under its own name.
 */
#ifndef TB_TEST_FUNC_TREE_H
#define TB_TEST_FUNC_TREE_H

#define TREE_FN __attribute__((noipa))

/* tree.c */
int tree_main(int x);
int leaf_a(int x);
int mid_b(int x);
int excluded_by_compiler(int x);
int under_compiler_excl(int x);
int under_file_excl(int x);
int runtime_skip_me(int x);
int under_runtime_skip(int x);
int runtime_prune_me(int x);
int under_runtime_prune(int x);
int recurse(int n);
int jumper(void);     /* longjmps out of two calls */
int deep_one(void);
int deep_two(void);

/* nt_file.c (not instrumented) */
int nt_file_func(int x);

/* tree_lib.c (libtree.so) */
int lib_c(int x);
int lib_leaf(int x);

#endif
