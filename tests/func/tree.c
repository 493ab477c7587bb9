// SPDX-License-Identifier: MIT
/*
 * tree.c - the instrumented call tree of test_func (tree.h).  Built with
 * -finstrument-functions-exclude-function-list=excluded_by_compiler.
 */
#include <setjmp.h>

#include "tree.h"

TREE_FN int leaf_a(int x)
{
	return x + 1;
}

TREE_FN int mid_b(int x)
{
	return leaf_a(x) + lib_c(x);
}

TREE_FN int under_compiler_excl(int x)
{
	return x * 2;
}

TREE_FN int excluded_by_compiler(int x)
{
	return under_compiler_excl(x) + 1;
}

TREE_FN int under_file_excl(int x)
{
	return x - 1;
}

TREE_FN int under_runtime_skip(int x)
{
	return x ^ 1;
}

TREE_FN int runtime_skip_me(int x)
{
	return under_runtime_skip(x) + 1;
}

TREE_FN int under_runtime_prune(int x)
{
	return x | 1;
}

TREE_FN int runtime_prune_me(int x)
{
	return under_runtime_prune(x) + 1;
}

TREE_FN int recurse(int n)
{
	return n ? recurse(n - 1) + 1 : 0;
}

TREE_FN int tree_main(int x)
{
	int s = leaf_a(x);

	s += mid_b(x);
	s += excluded_by_compiler(x);
	s += nt_file_func(x);
	s += runtime_skip_me(x);
	s += runtime_prune_me(x);
	s += recurse(2);
	return s;
}

static jmp_buf jump;

TREE_FN int deep_two(void)
{
	longjmp(jump, 1);
}

TREE_FN int deep_one(void)
{
	return deep_two() + 1;
}

TREE_FN int jumper(void)
{
	if (setjmp(jump))
		return 1;
	return deep_one();
}
