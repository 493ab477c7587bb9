// SPDX-License-Identifier: MIT
/* tree_lib.c - libtree.so, the part of test_func's call tree in a shared library. */
#include "tree.h"

TREE_FN int lib_leaf(int x)
{
	return x + 3;
}

TREE_FN int lib_c(int x)
{
	return lib_leaf(x) * 2;
}
