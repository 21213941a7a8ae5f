'use client'

export { RouteError as default } from '../../../components/route-states'
