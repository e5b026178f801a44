#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Placeholder: replaced by the test it names.
exit 77
