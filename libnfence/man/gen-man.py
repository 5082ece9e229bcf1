#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write libnfence's man pages (section 3) from its public header.

    gen-man.py HEADER MAP GROUPS VERSION OUTDIR

One page per group of GROUPS ("PAGE | WHAT | CALLS..."), made of the
kernel-doc comments ("/** Name() - purpose ... */", or the one-line
"/* Name() - purpose */") just above each call's prototype in HEADER;
a ".so" page per call that points at its group's page; and libnfence.3,
which lists the groups. Fails, writing nothing, if a symbol of MAP is in
no group or in two, if a group names a call that MAP does not export, or
if a call has no prototype or no comment in HEADER.
"""
import os
import re
import sys


def die(msg):
    sys.stderr.write('gen-man: %s\n' % msg)
    sys.exit(1)


def esc(text):
    """Roff-escape running text."""
    text = text.replace('\\', '\\e').replace('-', '\\-')
    # kernel-doc's @param: the parameter, in italics.
    return re.sub(r'@(\w+)', r'\\fI\1\\fP', text)


def para_lines(text):
    """A roff line never starts with a control character."""
    out = []
    for line in text.split('\n'):
        if line.startswith(('.', "'")):
            line = '\\&' + line
        out.append(line)
    return '\n'.join(out)


def parse_header(path):
    """Map each exported call to (prototype, comment lines)."""
    src = open(path).read()
    calls = {}
    proto_re = re.compile(r'^NFENCE_EXPORT\s+(.+?\b(\w+)\s*\(.*?\));', re.M | re.S)
    for m in proto_re.finditer(src):
        proto, name = ' '.join(m.group(1).split()), m.group(2)
        before = src[:m.start()].rstrip()
        comment = None
        if before.endswith('*/'):
            start = before.rfind('/*')
            block = before[start:]
            lines = block.split('\n')
            body = []
            for i, line in enumerate(lines):
                line = re.sub(r'^/\*\*?\s?', '', line) if i == 0 else line
                line = re.sub(r'\s*\*/$', '', line)
                line = re.sub(r'^\s*\*(?: |(?=\t)|$)', '', line)
                body.append(line.rstrip())
            while body and not body[0].strip():
                body.pop(0)
            while body and not body[-1].strip():
                body.pop()
            if body and re.match(r'%s\(\)\s+-\s+' % re.escape(name), body[0]):
                comment = body
        calls[name] = (proto, comment)
    return calls


def render_call(name, proto, comment):
    """The DESCRIPTION part of one call."""
    # The purpose may run over several lines, up to a blank line or @param.
    first = []
    rest = list(comment)
    while rest and rest[0].strip() and not rest[0].startswith('@'):
        first.append(rest.pop(0).strip())
    purpose = re.sub(r'^%s\(\)\s+-\s+' % re.escape(name), '', ' '.join(first))
    out = ['.SS %s()' % name, para_lines(esc(purpose[:1].upper() + purpose[1:])) + '.'
           if not purpose.endswith('.') else para_lines(esc(purpose))]
    params = []
    while rest and (rest[0].startswith('@') or
                    (params and rest[0].startswith('\t'))):
        line = rest.pop(0)
        if line.startswith('@'):
            pname, _, desc = line[1:].partition(':')
            params.append([pname.strip(), desc.strip()])
        else:
            params[-1][1] += ' ' + line.strip()
    for pname, desc in params:
        out += ['.TP', '.I %s' % pname, para_lines(esc(desc))]
    paras, cur = [], []
    for line in rest:
        if not line.strip():
            if cur:
                paras.append(cur)
            cur = []
        else:
            cur.append(line.strip())
    if cur:
        paras.append(cur)
    for p in paras:
        text = ' '.join(p)
        m = re.match(r'(Return|Context|Note):\s*(.*)', text)
        out.append('.PP')
        if m:
            out.append('.B %s:' % m.group(1))
            text = m.group(2)
        out.append(para_lines(esc(text)))
    return out


def main():
    if len(sys.argv) != 6:
        die('usage: gen-man.py HEADER MAP GROUPS VERSION OUTDIR')
    header, mapfile, groupfile, version, outdir = sys.argv[1:]
    exported = set(re.findall(r'^\s+(\w+);', open(mapfile).read(), re.M))
    exported.discard('local')
    calls = parse_header(header)
    groups = []
    seen = {}
    for line in open(groupfile):
        line = line.strip()
        if not line or line.startswith('#'):
            continue
        page, what, names = [f.strip() for f in line.split('|')]
        names = names.split()
        for n in names:
            if n in seen:
                die('%s is in %s and in %s' % (n, seen[n], page))
            seen[n] = page
            if n not in exported:
                die('%s (%s) is not exported by %s' % (n, page, mapfile))
            if n not in calls:
                die('%s (%s) has no prototype in %s' % (n, page, header))
            if calls[n][1] is None:
                die('%s has no "/** %s() - purpose" comment in %s' % (n, n, header))
        groups.append((page, what, names))
    missing = sorted(exported - set(seen))
    if missing:
        die('exported but in no group of %s: %s' % (groupfile, ' '.join(missing)))

    th = '.TH %%s 3 "" "libnfence %s" "libnfence Manual"' % version
    pages = {}
    for page, what, names in groups:
        out = [th % page.upper(), '.SH NAME',
               '%s \\- %s' % (', '.join(names), esc(what)), '.SH SYNOPSIS', '.nf',
               '.B #include <nfence/d3dkmthk.h>', '.PP']
        out += [para_lines(esc(calls[n][0])) + ';' for n in names]
        out += ['.fi', '.PP',
                'Link with \\fB\\-lnfence\\fP: \\fBpkg\\-config \\-\\-cflags '
                '\\-\\-libs libnfence\\fP.', '.SH DESCRIPTION']
        for n in names:
            out += render_call(n, *calls[n])
        others = ['.BR %s (3)%s' % (p, ',') for p, _, _ in groups if p != page]
        others.append('.BR libnfence (3)')
        out += ['.SH SEE ALSO'] + others
        pages[page + '.3'] = out
        for n in names:
            pages[n + '.3'] = ['.so man3/%s.3' % page]
    index = [th % 'LIBNFENCE', '.SH NAME',
             'libnfence \\- D3DKMT\\-style interface to the nfence DRM driver',
             '.SH SYNOPSIS', '.nf', '.B #include <nfence/d3dkmthk.h>', '.fi',
             '.PP', 'Link with \\fB\\-lnfence\\fP: \\fBpkg\\-config \\-\\-cflags '
             '\\-\\-libs libnfence\\fP.', '.SH DESCRIPTION',
             'The calls, one page per group:']
    for page, what, names in groups:
        index += ['.TP', '.BR %s (3)' % page, esc(what) + ': ' + ', '.join(names) + '.']
    index += [
        '.SH PROGRAMS WRITTEN FOR WSL',
        'libnfence exports every entry point of libdxg, WSL\'s D3DKMT library, '
        'under its name, and declares every type the two share with '
        'Microsoft\'s layout. A program built against Microsoft\'s headers '
        '(\\fI<wsl/winadapter.h>\\fP, \\fI<dxg/d3dkmthk.h>\\fP) keeps them and '
        'links with \\fBpkg\\-config \\-\\-libs libnfence\\fP in place of '
        '\\fB\\-ldxg\\fP; a program may instead include '
        '\\fI<nfence/d3dkmthk.h>\\fP in their place. libnfence installs no '
        '\\fI<dxg/d3dkmthk.h>\\fP and no library named libdxg, which would '
        'clash with libdxg\'s own. The calls nfence does not have return '
        'STATUS_NOT_SUPPORTED:',
        '.BR libnfence\\-unsupported (3).',
        'Documentation/libnfence.rst ("Entry points of WSL\'s D3DKMT") '
        'says for each of libdxg\'s calls what libnfence does with it.',
    ]
    pages['libnfence.3'] = index

    os.makedirs(outdir, exist_ok=True)
    for old in os.listdir(outdir):
        if old.endswith('.3') and old not in pages:
            os.unlink(os.path.join(outdir, old))
    for name, lines in pages.items():
        with open(os.path.join(outdir, name), 'w') as f:
            f.write('\n'.join(lines) + '\n')


if __name__ == '__main__':
    main()
