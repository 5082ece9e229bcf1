# SPDX-License-Identifier: GPL-2.0
#
# Sphinx configuration for "make docs": Documentation/*.rst, with the
# kernel-doc comments of the driver and the uapi pulled in by the kernel's
# own kernel-doc extension (from the linux-source-6.12 that "make deps"
# unpacks), as a kernel tree renders them.

import os
import sys

_top = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))
_ksrc = os.environ.get('NFENCE_KSRC',
                       os.path.expanduser('~/.cache/nfence/linux-source-6.12'))
sys.path.insert(0, os.path.join(_ksrc, 'Documentation', 'sphinx'))

project = 'nfence'
copyright = '2026, The nfence authors'
extensions = ['kerneldoc']
kerneldoc_bin = os.path.join(_ksrc, 'scripts', 'kernel-doc')
kerneldoc_srctree = _top
master_doc = 'index'
exclude_patterns = ['_build']
highlight_language = 'none'
html_theme = 'alabaster'
