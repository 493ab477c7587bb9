// SPDX-License-Identifier: MIT
/*
 * nt_file.c - built with -finstrument-functions-exclude-file-list naming
 * this file: its function is not traced, the one it calls back is.
 */
#include "tree.h"

TREE_FN int nt_file_func(int x)
{
	return under_file_excl(x) + 2;
}
